//! Work shared out on the current rayon pool without waiting for workers that are asleep; a
//! batch of texts one run of texts at a time ([`runs`]): each thread takes its own runs in
//! turn, then those of the others that no thread has started ([`Claims`]), until none is left.
//! Outside any pool, all of it runs on the calling thread.
//!
//! Why not rayon's `par_iter`: a sleeping worker can take milliseconds to start running once
//! woken, a large share of a short call. By then `par_iter` has split the work in halves, the
//! late worker takes its whole half, and the first worker, out of work, goes to sleep instead of
//! taking from the other's half, and needs waking again to return (docs/performance.md,
//! 'Threads'). Taking one run at a time, the threads run out of texts within one run of each
//! other, and each waits for the others with a short spin instead of sleeping.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a thread that has run out of texts spins while others finish theirs before it
/// goes back to rayon, which puts it to sleep (and waking it can take milliseconds).
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
/// asleep is not waited for. Each thread, done with its share, spins up to `SPIN` while
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

/// Which worker works on which part of a call (the parts of one text cut for threads, or the
/// texts of a batch). Worker `me` of `threads` takes its own parts
/// (k = me mod threads) in text order, then the parts of the others that no worker has
/// started, from the last one back, while their cost fits in its spare room.
///
/// Own parts first: each worker keeps its own chunk cache, so a text encoded again finds most
/// parts' chunks where they were left; handed out by work stealing alone, parts meet workers
/// that have not seen them, call after call (docs/performance.md, 'Threads'). The others' parts
/// after: a worker on a CPU slower than the others (as a virtual CPU can be, at times) would
/// otherwise hold up the whole call. A part taken this way is encoded with a cache that has
/// not seen it, so it costs more than its owner would have spent on it.
///
/// `me` is a share of [`on_each_thread`], which the pool's worker of that index runs as a rule.
pub struct Claims(Box<[AtomicBool]>);

impl Claims {
    pub fn new(parts: usize) -> Claims {
        Claims((0..parts).map(|_| AtomicBool::new(false)).collect())
    }

    /// Whether this worker is the first to claim part `k`.
    fn claim(&self, k: usize) -> bool {
        // The flag alone is shared: the parts' ids reach the caller when the workers join.
        !self.0[k].swap(true, Ordering::Relaxed)
    }

    /// Run `work` on the parts worker `me` claims, as the type doc says, taking others' parts
    /// of at most `spare` cost in all, and stop at the first error. A part that fails leaves
    /// the parts after it unclaimed no more: no worker starts them.
    ///
    /// The first error in text order is among those the workers return, whatever the timing:
    /// a claimed part is always worked on, parts before a failed one stay claimable, and the
    /// owner of the first failing part claims or finds claimed all its parts up to it, as none
    /// before it fails.
    pub fn run<E>(
        &self,
        me: usize,
        threads: usize,
        mut spare: usize,
        cost: impl Fn(usize) -> usize,
        mut work: impl FnMut(usize) -> Result<(), E>,
    ) -> Result<(), (usize, E)> {
        let n = self.0.len();
        let mut attempt = |k: usize| {
            work(k).map_err(|e| {
                for flag in &self.0[k + 1..] {
                    flag.store(true, Ordering::Relaxed);
                }
                (k, e)
            })
        };
        for k in (me..n).step_by(threads) {
            if self.claim(k) {
                attempt(k)?;
            }
        }
        for k in (0..n).rev().filter(|k| k % threads != me) {
            if cost(k) <= spare && self.claim(k) {
                spare -= cost(k);
                attempt(k)?;
            }
        }
        Ok(())
    }
}

/// Texts are handed out in runs of consecutive texts of at least this many bytes (a longer
/// text is a run of its own): a thread takes a run, not a text, at a time. One text at a
/// time, the threads take turns writing the same cache lines (the flags that hand texts out,
/// the slots of their results) at every text, and a batch of short texts runs slower on 2
/// threads than on one (docs/performance.md, 'Threads').
pub const RUN_BYTES: usize = 4 << 10;

/// `0..n` cut into runs of consecutive indices, each of `size` [`RUN_BYTES`] or more in all
/// but the last.
pub fn runs(n: usize, size: impl Fn(usize) -> usize) -> Vec<Range<usize>> {
    let mut runs = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for i in 0..n {
        bytes += size(i);
        if bytes >= RUN_BYTES {
            runs.push(start..i + 1);
            (start, bytes) = (i + 1, 0);
        }
    }
    if start < n {
        runs.push(start..n);
    }
    runs
}

/// Call `work(state, i)` for each `i` in `0..n` on the [`threads_here`], in the [`runs`] of
/// `size`, as [`Claims`] shares them out: each thread first its own runs (those equal to its
/// share modulo the threads), in order, then the others' that no thread has started, from the
/// last back. Each thread works with a `state` of its own, made by `new_state` when it starts;
/// the states are returned. Returns instead the error of the lowest `i` that failed, every `i`
/// below it worked on.
///
/// For work that leaves something behind on the thread that did it (a chunk cache): the same
/// batch given again goes to the same threads, whose caches have seen its texts
/// (docs/performance.md, 'Threads').
pub fn each_own_index<S: Send, E: Send>(
    n: usize,
    size: impl Fn(usize) -> usize,
    new_state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, usize) -> Result<(), E> + Sync,
) -> Result<Vec<S>, E> {
    let runs = runs(n, size);
    let claims = Claims::new(runs.len());
    let threads = threads_here().min(runs.len()).max(1);
    let done = on_each_thread(threads, |me| {
        let mut state = new_state();
        // A run's error is its first index's that failed: the lowest run's is the lowest.
        let result = claims.run(
            me,
            threads,
            usize::MAX,
            |_| 0,
            |k| runs[k].clone().try_for_each(|i| work(&mut state, i)),
        );
        (state, result)
    });
    let mut states = Vec::with_capacity(done.len());
    let mut failed: Option<(usize, E)> = None;
    for (state, result) in done {
        if let Err((k, e)) = result {
            if failed.as_ref().is_none_or(|(j, _)| k < *j) {
                failed = Some((k, e));
            }
        }
        states.push(state);
    }
    match failed {
        Some((_, e)) => Err(e),
        None => Ok(states),
    }
}

/// `work(i)` for each `i` in `0..n`, in order, computed as [`each_own_index`] does (in the
/// runs of `size`); the error of the lowest `i` that failed, if any did.
pub fn map_indices<T: Send + Sync, E: Send>(
    n: usize,
    size: impl Fn(usize) -> usize,
    work: impl Fn(usize) -> Result<T, E> + Sync,
) -> Result<Vec<T>, E> {
    let done: Vec<OnceLock<T>> = (0..n).map(|_| OnceLock::new()).collect();
    each_own_index(
        n,
        size,
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
    use crate::testing::Rng;

    fn pool_of(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// What `Claims::run` returns.
    type Ran<E> = Result<(), (usize, E)>;

    /// Run `claims` on `threads` scoped threads; `work(me, k)` is each worker's work. Returns
    /// which worker did each part (`None`: no worker) and each worker's result.
    fn share<E: Send>(
        claims: &Claims,
        threads: usize,
        spare: usize,
        work: impl Fn(usize, usize) -> Result<(), E> + Sync,
    ) -> (Vec<Option<usize>>, Vec<Ran<E>>) {
        let by = std::sync::Mutex::new(vec![None; claims.0.len()]);
        let results = std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads)
                .map(|me| {
                    let (by, work) = (&by, &work);
                    s.spawn(move || {
                        claims.run(
                            me,
                            threads,
                            spare,
                            |_| 1,
                            |k| {
                                let mut by = by.lock().unwrap();
                                assert_eq!(by[k], None, "part {k} worked on twice");
                                by[k] = Some(me);
                                drop(by);
                                work(me, k)
                            },
                        )
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        (by.into_inner().unwrap(), results)
    }

    #[test]
    fn a_worker_done_first_takes_the_others_last_parts_within_its_room() {
        // Worker 1 is held in its first part until worker 0 has worked on 18 parts: its own
        // (the even ones) and 6 (its spare room) of worker 1's, from the end. (A wrong
        // schedule makes the wait time out, and the assertion fail.)
        let claims = Claims::new(24);
        let zero = (std::sync::Mutex::new(0), std::sync::Condvar::new());
        let (by, results) = share(&claims, 2, 6, |me, _| {
            let (count, cv) = &zero;
            let mut count = count.lock().unwrap();
            if me == 1 {
                let wait = std::time::Duration::from_secs(10);
                drop(cv.wait_timeout_while(count, wait, |n| *n < 18).unwrap());
            } else {
                *count += 1;
                cv.notify_all();
            }
            Ok::<(), ()>(())
        });
        let want: Vec<Option<usize>> = (0..24)
            .map(|k| Some(if k % 2 == 0 || k >= 13 { 0 } else { 1 }))
            .collect();
        assert_eq!(by, want);
        assert!(results.iter().all(Result::is_ok));
    }

    #[test]
    fn no_part_after_a_failed_one_is_started() {
        // Part 0 fails at once; worker 1 is held in part 1 (if it claimed it first) until
        // the failure has been recorded, which marks the last part claimed (no worker claims
        // it before: worker 1 is held, and worker 0 stops at its failure). Waiting only until
        // part 0's work has begun to fail would let worker 1 start parts 3, 5, ... before the
        // failure reaches the claims. Nothing after part 1 is worked on. (If a
        // failure left the parts after it claimable, the wait would time out and worker 1
        // would go on to part 3.)
        let claims = Claims::new(20);
        let last = &claims.0[19];
        let (by, results) = share(&claims, 2, 20, |_, k| {
            if k == 0 {
                return Err(k);
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while !last.load(Ordering::Relaxed) && Instant::now() < deadline {
                std::thread::yield_now();
            }
            Ok(())
        });
        assert!(by[2..].iter().all(Option::is_none), "{by:?}");
        assert_eq!(results[0], Err((0, 0)));
    }

    #[test]
    fn every_part_is_worked_on_once_and_the_first_error_is_always_met() {
        let mut rng = Rng(0x5eed_1234);
        for round in 0..200 {
            let parts = 1 + rng.below(40);
            let threads = 1 + rng.below(4);
            let spare = rng.below(parts + 1);
            let fails: Vec<bool> = (0..parts).map(|_| rng.below(8) == 0).collect();
            let delays: Vec<u64> = (0..parts).map(|_| rng.below(3) as u64 * 100).collect();
            let claims = Claims::new(parts);
            let (by, results) = share(&claims, threads, spare, |_, k| {
                std::thread::sleep(std::time::Duration::from_micros(delays[k]));
                if fails[k] {
                    Err(k)
                } else {
                    Ok(())
                }
            });
            let first = fails.iter().position(|&f| f);
            let met = results.iter().filter_map(|r| r.as_ref().err()).min();
            assert_eq!(met.map(|e| e.0), first, "round {round}");
            assert!(results
                .iter()
                .all(|r| r.as_ref().err().is_none_or(|(k, e)| k == e)));
            if let Some(f) = first {
                assert!(by[..f].iter().all(Option::is_some), "round {round}: {by:?}");
            }
            if first.is_none() {
                assert!(by.iter().all(Option::is_some), "round {round}: {by:?}");
            }
            for me in 0..threads {
                let taken = (0..parts).filter(|&k| by[k] == Some(me) && k % threads != me);
                assert!(taken.count() <= spare, "round {round}");
            }
        }
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
                // Runs of one to many indices.
                let sizes: Vec<usize> = (0..n).map(|_| rng.below(3) * RUN_BYTES / 2).collect();
                let times = Mutex::new(vec![0; n]);
                let got = pool.install(|| {
                    map_indices(
                        n,
                        |i| sizes[i],
                        |i| {
                            times.lock().unwrap()[i] += 1;
                            std::thread::sleep(Duration::from_micros(delays[i]));
                            if fails[i] {
                                Err(i)
                            } else {
                                Ok(i * 3)
                            }
                        },
                    )
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
        let got = map_indices(
            50,
            |_| RUN_BYTES / 8,
            |i| {
                on.lock().unwrap().push(std::thread::current().id());
                Ok::<usize, ()>(i)
            },
        );
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
    fn runs_cover_every_index_once_and_each_has_its_bytes() {
        let mut rng = Rng(0x7a5c_0002);
        for round in 0..500 {
            let n = rng.below(40);
            let sizes: Vec<usize> = (0..n).map(|_| rng.below(2 * RUN_BYTES)).collect();
            let runs = runs(n, |i| sizes[i]);
            let flat: Vec<usize> = runs.iter().flat_map(Clone::clone).collect();
            assert_eq!(flat, (0..n).collect::<Vec<_>>(), "round {round}");
            for (k, run) in runs.iter().enumerate() {
                let bytes: usize = sizes[run.clone()].iter().sum();
                let without_last = bytes - sizes[run.end - 1];
                assert!(!run.is_empty() && without_last < RUN_BYTES, "round {round}");
                assert!(bytes >= RUN_BYTES || k == runs.len() - 1, "round {round}");
            }
        }
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
            each_own_index(
                40,
                |_| RUN_BYTES,
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
