//! Work shared out on the current rayon pool without waiting for workers that are asleep; a
//! batch of texts one text at a time: each thread takes the next text no thread has taken,
//! until none is left. Outside any pool, all of it runs on the calling thread.
//!
//! Why not rayon's `par_iter` (measured on holmes in 242 documents, gpt2, 2 threads, each
//! document's start and end recorded): in this project's virtual machine a sleeping worker
//! takes 2.3-2.9 ms to start running once woken (pinned to its own CPU or not), a quarter of
//! the ~11 ms call. `par_iter` had split the documents in halves by then, and the late
//! worker took the whole second half: the first worker ran out of documents at 7.2 ms, went to
//! sleep instead of taking from the other's half, and the other finished at 10.9 ms. The
//! first then needed waking again to return (another 3-11 ms in a third of the calls). Taking
//! one text at a time, the threads run out of texts within one text of each other, and each
//! waits for the others with a short spin instead of sleeping.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a thread that has run out of texts spins while others finish theirs before it
/// goes back to rayon, which puts it to sleep (and waking it costs milliseconds here).
const SPIN: Duration = Duration::from_millis(2);

/// The threads work is shared among here: the current rayon pool's, or outside any pool the
/// calling thread alone (not rayon's global pool: a caller that wants threads installs a pool).
pub fn threads_here() -> usize {
    match rayon::current_thread_index() {
        Some(_) => rayon::current_num_threads(),
        None => 1,
    }
}

/// Run `share(w)` for each `w` in `0..threads`, on the threads of the current rayon pool, and
/// return what each returned, in `w` order. With one share, it runs on the calling thread, in
/// a pool or not. Otherwise the calling thread runs its own share at once (`w`
/// is its index in the pool, modulo `threads`, so each worker tends to get the same `w` from
/// call to call); the others are spawned, for the other workers to take as they wake. One that
/// no worker has taken by the time the caller is done, the caller runs itself: a worker still
/// asleep is not waited for. Each thread, done with its share, spins up to [`SPIN`] while
/// others are still in theirs before going back to rayon, which would put it to sleep.
pub fn on_each_thread<T: Send>(threads: usize, share: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = threads.max(1);
    if threads == 1 {
        return vec![share(0)];
    }
    let done: Vec<Mutex<Option<T>>> = (0..threads).map(|_| Mutex::new(None)).collect();
    let working = AtomicUsize::new(0);
    let run = |w: usize| {
        working.fetch_add(1, Ordering::AcqRel);
        let got = share(w);
        *done[w].lock().unwrap_or_else(|p| p.into_inner()) = Some(got);
        working.fetch_sub(1, Ordering::AcqRel);
        let start = Instant::now();
        while working.load(Ordering::Acquire) > 0 && start.elapsed() < SPIN {
            std::hint::spin_loop();
        }
    };
    rayon::scope(|s| {
        let me = rayon::current_thread_index().unwrap_or(0) % threads;
        for w in (0..threads).filter(|&w| w != me) {
            let run = &run;
            s.spawn(move |_| run(w));
        }
        run(me);
    });
    // The scope ran every share once (a panic in one would have ended this call).
    done.into_iter()
        .flat_map(|d| d.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect()
}

/// The indices `0..n`, each handed out once, in increasing order, to whichever thread asks next.
pub struct Indices {
    next: AtomicUsize,
    n: usize,
}

impl Indices {
    pub fn new(n: usize) -> Indices {
        Indices {
            next: AtomicUsize::new(0),
            n,
        }
    }

    /// The next index no thread has taken, if any is left.
    pub fn take(&self) -> Option<usize> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        (i < self.n).then_some(i)
    }

    /// Hand out no more.
    pub fn stop(&self) {
        self.next.store(self.n, Ordering::Relaxed);
    }
}

/// Call `work(state, i)` for each `i` in `0..n` on the [`threads_here`], each thread taking
/// the next `i` not yet taken ([`Indices`], [`on_each_thread`]); after the first error no more
/// are taken. Each thread works with a `state` of its own, made by `new_state` when it starts;
/// the states are returned. Returns instead the error of the lowest `i` that failed:
/// the `i` are taken in order, so every `i` below it was taken before it, and was worked on.
pub fn each_index<S: Send, E: Send>(
    n: usize,
    new_state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, usize) -> Result<(), E> + Sync,
) -> Result<Vec<S>, E> {
    let indices = Indices::new(n);
    let failed: Mutex<Option<(usize, E)>> = Mutex::new(None);
    let states = on_each_thread(threads_here().min(n), |_| {
        let mut state = new_state();
        while let Some(i) = indices.take() {
            if let Err(e) = work(&mut state, i) {
                let mut failed = failed.lock().unwrap_or_else(|p| p.into_inner());
                if failed.as_ref().is_none_or(|(j, _)| i < *j) {
                    *failed = Some((i, e));
                }
                // Nothing after `i` is taken any more.
                indices.stop();
                break;
            }
        }
        state
    });
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, e)) => Err(e),
        None => Ok(states),
    }
}

/// `work(i)` for each `i` in `0..n`, in order, computed as [`each_index`] does; the error of
/// the lowest `i` that failed, if any did.
pub fn map_indices<T: Send + Sync, E: Send>(
    n: usize,
    work: impl Fn(usize) -> Result<T, E> + Sync,
) -> Result<Vec<T>, E> {
    let done: Vec<OnceLock<T>> = (0..n).map(|_| OnceLock::new()).collect();
    each_index(
        n,
        || (),
        |(), i| {
            let _ = done[i].set(work(i)?);
            Ok(())
        },
    )?;
    // Without an error, every `i` was worked on.
    Ok(done.into_iter().flat_map(OnceLock::into_inner).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::Rng;

    fn pool_of(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    #[test]
    fn every_index_once_in_order_and_the_lowest_error() {
        let mut rng = Rng(0x7a5c_0001);
        for threads in [1, 2, 3] {
            let pool = pool_of(threads);
            for round in 0..100 {
                let n = rng.below(60);
                let fails: Vec<bool> = (0..n).map(|_| rng.below(10) == 0).collect();
                let delays: Vec<u64> = (0..n).map(|_| rng.below(3) as u64 * 50).collect();
                let times = Mutex::new(vec![0; n]);
                let got = pool.install(|| {
                    map_indices(n, |i| {
                        times.lock().unwrap()[i] += 1;
                        std::thread::sleep(Duration::from_micros(delays[i]));
                        if fails[i] {
                            Err(i)
                        } else {
                            Ok(i * 3)
                        }
                    })
                });
                let first = fails.iter().position(|&f| f);
                let times = times.into_inner().unwrap();
                match first {
                    Some(i) => {
                        assert_eq!(got, Err(i), "{threads} threads, round {round}");
                        assert!(times[..=i].iter().all(|&t| t == 1));
                    }
                    None => {
                        assert_eq!(got, Ok((0..n).map(|i| i * 3).collect()));
                        assert!(times.iter().all(|&t| t == 1));
                    }
                }
                assert!(times.iter().all(|&t| t <= 1));
            }
        }
    }

    #[test]
    fn each_share_runs_once_whatever_the_pool() {
        for pool_threads in [1, 2, 3] {
            let pool = pool_of(pool_threads);
            for threads in 0..5 {
                let runs = Mutex::new(Vec::new());
                let got = pool.install(|| {
                    on_each_thread(threads, |w| {
                        runs.lock().unwrap().push(w);
                        w * 10
                    })
                });
                let mut runs = runs.into_inner().unwrap();
                runs.sort();
                let want: Vec<usize> = (0..threads.max(1)).collect();
                assert_eq!(runs, want, "{pool_threads} in the pool, {threads} shares");
                assert_eq!(got, want.iter().map(|w| w * 10).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn outside_a_pool_all_runs_on_the_calling_thread() {
        // Not on rayon's global pool: a caller that wants threads installs a pool.
        let me = std::thread::current().id();
        assert_eq!(threads_here(), 1);
        let on = Mutex::new(Vec::new());
        let got = map_indices(50, |i| {
            on.lock().unwrap().push(std::thread::current().id());
            Ok::<usize, ()>(i)
        });
        assert_eq!(got, Ok((0..50).collect()));
        assert!(on.into_inner().unwrap().iter().all(|&t| t == me));
        assert_eq!(
            on_each_thread(1, |w| (w, std::thread::current().id())),
            [(0, me)]
        );
        // In a pool of two, both take part.
        assert_eq!(pool_of(2).install(threads_here), 2);
    }

    #[test]
    fn indices_are_taken_once_in_order_until_stopped() {
        let indices = Indices::new(3);
        assert_eq!(indices.take(), Some(0));
        assert_eq!(indices.take(), Some(1));
        indices.stop();
        assert_eq!(indices.take(), None);
        let indices = Indices::new(2);
        let taken: Vec<_> = std::iter::from_fn(|| indices.take()).collect();
        assert_eq!(taken, [0, 1]);
        assert_eq!(indices.take(), None);
    }

    #[test]
    fn a_slow_thread_takes_fewer_texts() {
        // Index 0 takes long: whoever took it does little else, and the others take the rest.
        let pool = pool_of(2);
        let by = Mutex::new(Vec::new());
        pool.install(|| {
            each_index(
                40,
                || (),
                |(), i| {
                    if i == 0 {
                        std::thread::sleep(Duration::from_millis(200));
                    } else {
                        std::thread::sleep(Duration::from_micros(100));
                    }
                    by.lock().unwrap().push((i, rayon::current_thread_index()));
                    Ok::<(), ()>(())
                },
            )
        })
        .unwrap();
        let by = by.into_inner().unwrap();
        let slow = by.iter().find(|(i, _)| *i == 0).unwrap().1;
        let with_slow = by.iter().filter(|(_, t)| *t == slow).count();
        assert!(with_slow < 5, "{by:?}");
    }
}
