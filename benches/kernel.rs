//! The hold model of event-set benchmarks on the kernel, next to a bare `BinaryHeap`
//! push/pop loop doing the same draws, at 1e3, 1e4 and 1e5 pending events.
//! `cargo bench --bench kernel`; throughput is reported in events/s (elements/s).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use vtsim::bench::{hold_bare_heap, hold_kernel};

const EVENTS: u64 = 1_000_000;

fn hold(c: &mut Criterion) {
    let mut g = c.benchmark_group("hold");
    g.sample_size(10);
    g.throughput(Throughput::Elements(EVENTS));
    for pending in [1_000u32, 10_000, 100_000] {
        g.bench_with_input(
            BenchmarkId::new("kernel+digest", pending),
            &pending,
            |b, &p| b.iter(|| hold_kernel(p, EVENTS, true)),
        );
        g.bench_with_input(BenchmarkId::new("kernel", pending), &pending, |b, &p| {
            b.iter(|| hold_kernel(p, EVENTS, false))
        });
        g.bench_with_input(
            BenchmarkId::new("bare-binaryheap", pending),
            &pending,
            |b, &p| b.iter(|| hold_bare_heap(p, EVENTS)),
        );
    }
    g.finish();
}

criterion_group!(benches, hold);
criterion_main!(benches);
