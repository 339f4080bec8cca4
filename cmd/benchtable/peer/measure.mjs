// measure.mjs is the measuring loop the Node peers share: it runs each program
// through an engine's compile and runOnce, checks their values, and prints one JSON
// object with, for each program, the per-run wall time in microseconds (see summary).
// The programs alternate run by run.
//
// Arguments: [iterations] [rounds] (default 1000 × 5, after 200 warm-up runs).

export async function measure(engine, compile, runOnce) {
  const iterations = Number.parseInt(process.argv[2] ?? '1000', 10);
  const rounds = Number.parseInt(process.argv[3] ?? '5', 10);
  if (!Number.isInteger(iterations) || iterations < 1 || !Number.isInteger(rounds) || rounds < 1) {
    process.stderr.write(`peer: usage: node peer.mjs [iterations ≥ 1] [rounds ≥ 1], not ${process.argv.slice(2).join(' ')}\n`);
    process.exit(2);
  }
  const warmup = Math.min(200, iterations);

  // The same programs the Go harness runs through App.Run, each the body of an
  // async function (top-level await and return work, as in run_code).
  const programs = {
    trivial: 'return 1',
    calls20: 'let s = 0; for (let i = 0; i < 20; i++) s += (await tools.math_add({a: i, b: 2})).sum; return s',
  };

  // summary reports per-run times: mean_us is the median over rounds of each
  // round's mean (total time ÷ runs, so the garbage collection of discarded
  // contexts is paid for, as in Go's ns/op); median_us, p10_us and p90_us are
  // quantiles of the single runs of all rounds.
  function summary(rounds) {
    const all = Float64Array.from(rounds.flat()).sort();
    const at = (q) => all[Math.min(all.length - 1, Math.floor(q * all.length))];
    const means = Float64Array.from(rounds.map((r) => r.reduce((a, b) => a + b, 0) / r.length)).sort();
    return {
      mean_us: means[Math.floor(means.length / 2)],
      round_means_us: Array.from(means),
      median_us: at(0.5), p10_us: at(0.1), p90_us: at(0.9), n: all.length,
    };
  }

  const want = { trivial: '1', calls20: String(Array.from({ length: 20 }, (_, i) => i + 2).reduce((a, b) => a + b, 0)) };
  const scripts = Object.entries(programs).map(([name, body]) => [name, compile(body)]);
  for (const [name, script] of scripts) {
    const got = await runOnce(script);
    if (got !== want[name]) {
      process.stderr.write(`peer: ${name} returned ${got}, want ${want[name]}\n`);
      process.exit(1);
    }
  }
  // The programs alternate, so that both see the same heap and the same
  // garbage collections of the contexts left behind.
  for (let i = 0; i < warmup; i++) {
    for (const [, script] of scripts) await runOnce(script);
  }
  const samples = Object.fromEntries(scripts.map(([name]) => [name, []]));
  for (let r = 0; r < rounds; r++) {
    const round = Object.fromEntries(scripts.map(([name]) => [name, new Array(iterations)]));
    for (let i = 0; i < iterations; i++) {
      for (const [name, script] of scripts) {
        const start = process.hrtime.bigint();
        await runOnce(script);
        round[name][i] = Number(process.hrtime.bigint() - start) / 1e3;
      }
    }
    for (const [name] of scripts) samples[name].push(round[name]);
  }
  const out = { node: process.version, engine, iterations, rounds, programs: {} };
  for (const [name] of scripts) out.programs[name] = summary(samples[name]);
  process.stdout.write(JSON.stringify(out) + '\n');
}
