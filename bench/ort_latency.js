// Median latency of an ONNX model in ONNX Runtime (npm onnxruntime-node, CPU
// execution provider), for bench/onnx_models.py.
//
// Usage: node ort_latency.js MODEL.onnx INPUT.f32 DIM,DIM,... THREADS RUNS
// INPUT.f32 holds the input `x` as raw little-endian floats. Prints the
// median of RUNS timed runs in milliseconds, after three warm-up runs, and
// the cold start: session creation plus the first run.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const [model, inputPath, dims, threads, runs] = process.argv.slice(2);
  const bytes = fs.readFileSync(inputPath);
  const data = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  const feeds = {x: new ort.Tensor('float32', data, dims.split(',').map(Number))};
  const created = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
  });
  await session.run(feeds);
  const cold = Number(process.hrtime.bigint() - created) / 1e6;
  for (let i = 0; i < 2; ++i)
    await session.run(feeds);
  const samples = [];
  for (let i = 0; i < Number(runs); ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  samples.sort((a, b) => a - b);
  console.log(samples[Math.floor(samples.length / 2)].toFixed(4), cold.toFixed(4));
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
