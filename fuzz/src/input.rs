//! A fuzzer's bytes read as a few small choices, then the rest as text: every byte string is
//! an input, and the seeds stay readable (a few choice bytes, then plain text).

pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Input<'a> {
        Input { data }
    }

    /// The next byte; 0 past the end.
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// A choice in `0..n` (`n` at most 256).
    pub fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n.max(1)
    }

    /// One of `items` (not empty).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// The bytes up to the next `0` (which is consumed), or to the end.
    pub fn until_zero(&mut self) -> &'a [u8] {
        let end = self
            .data
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.data.len());
        let (head, tail) = self.data.split_at(end);
        self.data = tail.get(1..).unwrap_or_default();
        head
    }

    /// The remaining bytes.
    pub fn rest(self) -> &'a [u8] {
        self.data
    }

    /// The remaining bytes as text (invalid UTF-8 replaced, so that every input is text).
    pub fn rest_text(self) -> String {
        String::from_utf8_lossy(self.data).into_owned()
    }
}
