//! The rayon pools of this process, and workers kept off each other's CPU.
//!
//! A pool's workers sleep between calls and are woken for each one. A scheduler that packs
//! virtual CPUs (Linux's `sched_vcpu_pack`) may wake both workers of a 2-thread pool on the
//! same CPU and leave them there for the length of a short call, which then runs at the speed
//! of one thread (docs/performance.md, 'Threads').
//!
//! Pinning for good would be wrong elsewhere (every process would pin its workers to the same
//! first CPUs), so each worker checks once per call, when it starts its first text
//! ([`settle`]): if another worker of its pool is on its CPU in the same call, it moves itself
//! to a CPU none of them is on, then gives its CPU mask back, so the kernel stays free to
//! move it later. The check is a thread-local read per text; the move is two system calls,
//! made only when two workers share a CPU.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// A rayon pool whose workers [`settle`] at the start of each call.
pub struct Pool {
    rayon: rayon::ThreadPool,
    spread: Arc<Spread>,
}

/// What the workers of one pool know of each other.
struct Spread {
    /// Counts the pool's calls: a worker checks once per call.
    call: AtomicU64,
    /// For each worker, the call it last checked in and the CPU it was then on (or moved to).
    /// The lock makes each check and move one step, so two workers never pick the same CPU.
    seen: Mutex<Vec<Option<(u64, usize)>>>,
}

impl Pool {
    fn new(threads: usize) -> Result<Pool, rayon::ThreadPoolBuildError> {
        let spread = Arc::new(Spread {
            call: AtomicU64::new(0),
            seen: Mutex::new(vec![None; threads]),
        });
        let for_workers = spread.clone();
        let rayon = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("tokenmill-{i}"))
            .start_handler(move |index| {
                WORKER.with(|w| {
                    *w.borrow_mut() = Some(Worker {
                        spread: for_workers.clone(),
                        index,
                        checked: u64::MAX,
                    })
                })
            })
            .build()?;
        Ok(Pool { rayon, spread })
    }

    /// Run `op` on the pool (rayon's `install`), as a new call: each worker settles again.
    pub fn install<R: Send>(&self, op: impl FnOnce() -> R + Send) -> R {
        self.spread.call.fetch_add(1, Ordering::Relaxed);
        self.rayon.install(op)
    }

    /// rayon's `in_place_scope` on the pool, as a new call: `op` runs on this thread, and what
    /// it spawns on the pool's workers; returns once all of it is done.
    pub fn in_place_scope<'s, R>(&self, op: impl FnOnce(&rayon::Scope<'s>) -> R) -> R {
        self.spread.call.fetch_add(1, Ordering::Relaxed);
        self.rayon.in_place_scope(op)
    }
}

/// The rayon pools of this process, by thread count, most recently used last.
struct Pools {
    /// The process that built them.
    pid: u32,
    pools: Vec<(usize, Arc<Pool>)>,
}

/// How many pools stay built. A program that asks for many thread counts in turn would
/// otherwise keep every pool's threads alive for good; the least recently used pool beyond
/// these is dropped (its threads end once a call still running on it returns).
const POOLS_KEPT: usize = 4;

/// The most threads a pool has: the CPUs this process may use (its affinity mask and cgroup
/// quota, as `std::thread::available_parallelism` reads them). The work is CPU-bound, so more
/// threads than CPUs only add wake-ups and contention, and an unbounded count would let one
/// call start thousands of threads.
pub fn most_threads() -> usize {
    static MOST: OnceLock<usize> = OnceLock::new();
    *MOST.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A pool of `threads` workers (clamped to `1..=most_threads()`), built once per count: building
/// one costs more than a small batch.
///
/// A forked child (Python's `multiprocessing` and PyTorch's `DataLoader` workers on Linux)
/// inherits the pools but not their threads, and work sent to them would wait forever: HF
/// tokenizers' `TOKENIZERS_PARALLELISM` deadlock. So a child that finds its parent's pools
/// forgets them (dropping one would signal threads that do not exist here) and builds its own.
pub fn pool(threads: usize) -> Result<Arc<Pool>, rayon::ThreadPoolBuildError> {
    static POOLS: Mutex<Pools> = Mutex::new(Pools {
        pid: 0,
        pools: Vec::new(),
    });
    let threads = threads.clamp(1, most_threads());
    let mut pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    let pid = std::process::id();
    if pools.pid != pid {
        pools.pools.drain(..).for_each(std::mem::forget);
        pools.pid = pid;
    }
    let pools = &mut pools.pools;
    kept(pools, threads, || Pool::new(threads).map(Arc::new))
}

/// The entry for `n` in `pools` (moved to the end, as the most recently used), or a new one
/// from `build` added at the end, dropping the least recently used beyond [`POOLS_KEPT`].
fn kept<T: Clone, E>(
    pools: &mut Vec<(usize, T)>,
    n: usize,
    build: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    let entry = match pools.iter().position(|(k, _)| *k == n) {
        Some(i) => pools.remove(i),
        None => (n, build()?),
    };
    let value = entry.1.clone();
    pools.push(entry);
    if pools.len() > POOLS_KEPT {
        pools.remove(0);
    }
    Ok(value)
}

struct Worker {
    spread: Arc<Spread>,
    index: usize,
    /// The last call this worker checked in.
    checked: u64,
}

thread_local! {
    static WORKER: std::cell::RefCell<Option<Worker>> = const { std::cell::RefCell::new(None) };
}

/// On a worker of a [`Pool`], once per call: move off a CPU that another worker of the pool is
/// on in the same call, to one none of them is on (see the module doc). Elsewhere, nothing.
///
/// The first worker of a call to get here also yields its CPU once. A worker woken onto its
/// CPU would otherwise wait for the scheduler to preempt it (milliseconds, much of a short
/// call) before it can run and move (docs/performance.md, 'Threads').
pub fn settle() {
    WORKER.with(|w| {
        let mut w = w.borrow_mut();
        let Some(w) = w.as_mut() else { return };
        let call = w.spread.call.load(Ordering::Relaxed);
        if w.checked == call {
            return;
        }
        w.checked = call;
        let Some(cpu) = os::current_cpu() else { return };
        let mut seen = w.spread.seen.lock().unwrap_or_else(|p| p.into_inner());
        let first = seen
            .iter()
            .all(|s| !matches!(s, Some((c, _)) if *c == call));
        let at = match move_to(&seen, w.index, call, cpu, os::allowed_cpus) {
            Some(to) if os::move_to(to) => to,
            _ => cpu,
        };
        seen[w.index] = Some((call, at));
        let others = seen.len() > 1;
        drop(seen);
        if first && others {
            std::thread::yield_now();
        }
    })
}

/// Where worker `me`, on `cpu` in call `call`, should move: `None` unless another worker is on
/// `cpu` in the same call; then the first of the `allowed` CPUs that no worker of this call
/// is on (`None` if every allowed CPU has one).
fn move_to(
    seen: &[Option<(u64, usize)>],
    me: usize,
    call: u64,
    cpu: usize,
    allowed: impl FnOnce() -> Vec<usize>,
) -> Option<usize> {
    let taken = |c: usize| {
        seen.iter()
            .enumerate()
            .any(|(i, s)| i != me && *s == Some((call, c)))
    };
    if !taken(cpu) {
        return None;
    }
    allowed().into_iter().find(|&c| c != cpu && !taken(c))
}

#[cfg(target_os = "linux")]
mod os {
    use std::mem::{size_of, zeroed};

    pub fn current_cpu() -> Option<usize> {
        // SAFETY: no arguments; returns -1 on error.
        usize::try_from(unsafe { libc::sched_getcpu() }).ok()
    }

    fn mask() -> Option<libc::cpu_set_t> {
        // SAFETY: `set` is a plain bit set, valid all-zero, and its size is passed.
        unsafe {
            let mut set: libc::cpu_set_t = zeroed();
            (libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) == 0).then_some(set)
        }
    }

    /// The CPUs this thread may run on.
    pub fn allowed_cpus() -> Vec<usize> {
        let Some(set) = mask() else { return Vec::new() };
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `c` is below CPU_SETSIZE, the size of `set`.
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect()
    }

    /// Move this thread to `cpu` now (a one-CPU mask migrates a running thread before the call
    /// returns), then give back its mask. False if either call fails.
    pub fn move_to(cpu: usize) -> bool {
        let Some(old) = mask() else { return false };
        // SAFETY: plain bit sets of the size passed; `cpu` comes from `allowed_cpus`, so it is
        // below CPU_SETSIZE.
        unsafe {
            let mut one: libc::cpu_set_t = zeroed();
            libc::CPU_SET(cpu, &mut one);
            let size = size_of::<libc::cpu_set_t>();
            let moved = libc::sched_setaffinity(0, size, &one) == 0;
            libc::sched_setaffinity(0, size, &old) == 0 && moved
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    pub fn current_cpu() -> Option<usize> {
        None
    }
    pub fn allowed_cpus() -> Vec<usize> {
        Vec::new()
    }
    pub fn move_to(_cpu: usize) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_worker_that_shares_a_cpu_in_the_same_call_moves() {
        let all = || vec![0, 1, 2, 3];
        // Alone on CPU 0, or sharing it only with a record of an earlier call: stay.
        assert_eq!(move_to(&[None, None], 1, 7, 0, all), None);
        assert_eq!(move_to(&[Some((6, 0)), None], 1, 7, 0, all), None);
        // Worker 0 is on CPU 0 in this call: worker 1 goes to the first free CPU.
        assert_eq!(move_to(&[Some((7, 0)), None], 1, 7, 0, all), Some(1));
        // CPU 1 is taken too, by worker 2 in this call: CPU 2.
        let seen = [Some((7, 0)), None, Some((7, 1))];
        assert_eq!(move_to(&seen, 1, 7, 0, all), Some(2));
        // A worker's own earlier record does not count against it.
        assert_eq!(
            move_to(&[Some((7, 0)), Some((7, 0))], 1, 7, 0, all),
            Some(1)
        );
        // No allowed CPU free: stay.
        assert_eq!(move_to(&[Some((7, 0)), None], 1, 7, 0, || vec![0]), None);
        assert_eq!(
            move_to(&[Some((7, 0)), None, Some((7, 2))], 1, 7, 0, || vec![0, 2]),
            None
        );
    }

    #[test]
    fn workers_of_a_call_end_on_different_cpus() {
        let allowed = os::allowed_cpus();
        if allowed.len() < 2 || cfg!(not(target_os = "linux")) {
            return;
        }
        let pool = Pool::new(2).unwrap();
        // Put both workers on one CPU (their masks are given back at once), then start a
        // call in which each settles: they must record two CPUs. (What `sched_getcpu` says
        // afterwards is not checked: with the masks given back, the kernel may move a worker
        // again at once.)
        let first = allowed[0];
        pool.rayon.broadcast(|_| assert!(os::move_to(first)));
        let barrier = std::sync::Barrier::new(2);
        pool.install(|| {
            pool.rayon.broadcast(|_| {
                settle();
                barrier.wait();
            })
        });
        let call = pool.spread.call.load(Ordering::Relaxed);
        let seen = pool.spread.seen.lock().unwrap().clone();
        let cpus: Vec<usize> = seen
            .iter()
            .map(|s| match s {
                Some((c, cpu)) if *c == call => *cpu,
                other => panic!("a worker did not settle in this call: {other:?}"),
            })
            .collect();
        assert_ne!(cpus[0], cpus[1], "{cpus:?}");
    }

    #[test]
    fn pools_have_at_most_the_cpus_threads() {
        assert_eq!(
            pool(100_000).unwrap().rayon.current_num_threads(),
            most_threads()
        );
        assert_eq!(pool(0).unwrap().rayon.current_num_threads(), 1);
    }

    #[test]
    fn the_least_recently_used_pools_beyond_the_kept_are_dropped() {
        let mut pools: Vec<(usize, usize)> = Vec::new();
        let build = |n: usize| move || Ok::<usize, ()>(n * 10);
        for n in 1..=POOLS_KEPT + 2 {
            assert_eq!(kept(&mut pools, n, build(n)), Ok(n * 10));
        }
        let keys = |p: &[(usize, usize)]| p.iter().map(|e| e.0).collect::<Vec<_>>();
        assert_eq!(keys(&pools), (3..=POOLS_KEPT + 2).collect::<Vec<_>>());
        // A pool used again is not rebuilt and becomes the most recent.
        assert_eq!(kept(&mut pools, 3, || Err(())), Ok(30));
        assert_eq!(*keys(&pools).last().unwrap(), 3);
        assert_eq!(kept(&mut pools, 1, build(1)), Ok(10));
        assert_eq!(keys(&pools)[0], 5);
        assert_eq!(pools.len(), POOLS_KEPT);
    }
}
