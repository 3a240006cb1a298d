#!/usr/bin/env node
// frs.js — tesbo's face-recognition sidecar (protocol version 1, see
// ../PROTOCOL.md). It wraps @vladmandic/face-api: SSD-MobileNetV1 or the tiny
// detector, the 68-point landmark model and the 128-d recognition model.
//
// It reads one JSON request per line on stdin and writes one JSON reply per
// line on stdout; logs go to stderr only. After the models are loaded it
// prints a ready line. A bad request gets an error reply; the process stays
// up. Everything (models, wasm binaries) is read from node_modules: nothing
// is fetched from the network.
//
// Usage: node frs.js [--backend wasm|cpu] [--models DIR]
'use strict';

const fs = require('fs');
const path = require('path');
const readline = require('readline');

const PROTOCOL = 1;

// stdout carries only protocol lines: route every console method (tfjs and
// face-api print notices) to stderr before anything is loaded.
for (const m of ['log', 'info', 'warn', 'debug', 'trace']) {
  console[m] = (...args) => process.stderr.write(args.map(String).join(' ') + '\n'); // eslint-disable-line no-console
}

function log(msg, extra) {
  const rec = Object.assign({ level: 'info', component: 'frs', pid: process.pid, msg }, extra || {});
  process.stderr.write(JSON.stringify(rec) + '\n');
}

function parseArgs(argv) {
  const opts = { backend: 'wasm', models: null };
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--backend') opts.backend = argv[++i];
    else if (a === '--models') opts.models = argv[++i];
    else throw new Error(`unknown argument ${a} (usage: frs.js [--backend wasm|cpu] [--models DIR])`);
  }
  if (opts.backend !== 'wasm' && opts.backend !== 'cpu') {
    throw new Error(`backend must be wasm or cpu, got ${opts.backend}`);
  }
  return opts;
}

// The packages are resolved relative to this file so the sidecar can be
// started from any working directory.
function pkgDir(name) {
  return path.dirname(require.resolve(`${name}/package.json`, { paths: [__dirname] }));
}

let faceapi; // loaded in init
let tf;

async function init(opts) {
  const t0 = Date.now();
  // The package's default entry wants tfjs-node, which does not install
  // here; the node-wasm bundle takes @tensorflow/tfjs and tfjs-backend-wasm.
  const faceDir = pkgDir('@vladmandic/face-api');
  faceapi = require(path.join(faceDir, 'dist', 'face-api.node-wasm.js'));
  tf = faceapi.tf;
  if (opts.backend === 'wasm') {
    const wasmDir = path.join(pkgDir('@tensorflow/tfjs-backend-wasm'), 'dist');
    // Multi-threaded WASM fails under Node (worker path), so pin the
    // single-threaded binaries; run one sidecar per core instead.
    tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
    tf.setWasmPaths({
      'tfjs-backend-wasm.wasm': path.join(wasmDir, 'tfjs-backend-wasm.wasm'),
      'tfjs-backend-wasm-simd.wasm': path.join(wasmDir, 'tfjs-backend-wasm-simd.wasm'),
      'tfjs-backend-wasm-threaded-simd.wasm': path.join(wasmDir, 'tfjs-backend-wasm-threaded-simd.wasm'),
    }, false);
  }
  const ok = await tf.setBackend(opts.backend);
  if (!ok) throw new Error(`tfjs backend ${opts.backend} failed to initialize`);
  await tf.ready();
  const models = opts.models || path.join(faceDir, 'model');
  await faceapi.nets.ssdMobilenetv1.loadFromDisk(models);
  await faceapi.nets.tinyFaceDetector.loadFromDisk(models);
  await faceapi.nets.faceLandmark68Net.loadFromDisk(models);
  await faceapi.nets.faceRecognitionNet.loadFromDisk(models);
  const facePkg = JSON.parse(fs.readFileSync(path.join(faceDir, 'package.json'), 'utf8'));
  return {
    frs: `face-api ${facePkg.version}`,
    tfjs: tf.version_core,
    backend: tf.getBackend(),
    load_ms: Date.now() - t0,
  };
}

// ---------------------------------------------------------------------------
// Images

// decodeImage checks and decodes {width, height, rgb: base64} into a Uint8Array.
function decodeImage(img) {
  if (!img || typeof img !== 'object') throw new Error('image missing: want {width, height, rgb}');
  const w = img.width;
  const h = img.height;
  if (!Number.isInteger(w) || !Number.isInteger(h) || w <= 0 || h <= 0) {
    throw new Error(`image width/height must be positive integers, got ${w}x${h}`);
  }
  if (w * h > 64e6) throw new Error(`image too large: ${w}x${h}`);
  if (typeof img.rgb !== 'string') throw new Error('image.rgb must be a base64 string of width*height*3 bytes');
  const buf = Buffer.from(img.rgb, 'base64');
  if (buf.length !== w * h * 3) {
    throw new Error(`image.rgb has ${buf.length} bytes, want width*height*3 = ${w * h * 3}`);
  }
  return { w, h, data: new Uint8Array(buf.buffer, buf.byteOffset, buf.length) };
}

function toTensor(img) {
  return tf.tensor3d(new Int32Array(img.data), [img.h, img.w, 3], 'int32');
}

// ---------------------------------------------------------------------------
// Face chip: dlib's geometry (get_face_chip_details with size 150, padding
// 0.25). A least-squares similarity transform maps dlib's mean face (points
// 27–54 and 60–64 of the 68-point scheme) in the chip to the given landmarks
// in the image; the chip is then sampled bilinearly. Doing the crop here,
// square and from the landmarks alone, makes the descriptor independent of
// how the face was found (face-api's own crop is clipped by the detection box).

const CHIP = 150;
const PADDING = 0.25;
// dlib's mean face shape for points 17..67 (x then y), in [0,1].
const MEAN_X = [
  0.000213256, 0.0752622, 0.18113, 0.29077, 0.393397, 0.586856, 0.689483, 0.799124,
  0.904991, 0.98004, 0.490127, 0.490127, 0.490127, 0.490127, 0.36688, 0.426036,
  0.490127, 0.554217, 0.613373, 0.121737, 0.187122, 0.265825, 0.334606, 0.260918,
  0.182743, 0.645647, 0.714428, 0.793132, 0.858516, 0.79751, 0.719335, 0.254149,
  0.340985, 0.428858, 0.490127, 0.551395, 0.639268, 0.726104, 0.642159, 0.556721,
  0.490127, 0.423532, 0.338094, 0.290379, 0.428096, 0.490127, 0.552157, 0.689874,
  0.553364, 0.490127, 0.42689,
];
const MEAN_Y = [
  0.106454, 0.038915, 0.0187482, 0.0344891, 0.0773906, 0.0773906, 0.0344891,
  0.0187482, 0.038915, 0.106454, 0.203352, 0.307009, 0.409805, 0.515625, 0.587326,
  0.609345, 0.628106, 0.609345, 0.587326, 0.216423, 0.178758, 0.179852, 0.231733,
  0.245099, 0.244077, 0.231733, 0.179852, 0.178758, 0.216423, 0.244077, 0.245099,
  0.780233, 0.745405, 0.727388, 0.742578, 0.727388, 0.745405, 0.780233, 0.864805,
  0.902192, 0.909281, 0.902192, 0.864805, 0.784792, 0.778746, 0.785343, 0.778746,
  0.784792, 0.824182, 0.831803, 0.824182,
];

function chipPointUsed(i) {
  if (i >= 17 && i <= 26) return false; // eyebrows
  if ((i >= 55 && i <= 59) || (i >= 65 && i <= 67)) return false; // lower lip
  return i >= 17 && i < 68;
}

function checkLandmarks(lm) {
  if (!Array.isArray(lm) || lm.length !== 68) {
    throw new Error(`landmarks must be 68 [x, y] pairs, got ${Array.isArray(lm) ? lm.length : typeof lm}`);
  }
  for (let i = 0; i < 68; i++) {
    const p = lm[i];
    if (!Array.isArray(p) || p.length !== 2 || !Number.isFinite(p[0]) || !Number.isFinite(p[1])) {
      throw new Error(`landmark ${i} is not a finite [x, y] pair`);
    }
  }
}

// similarity returns (a, b, tx, ty) with image = [a -b; b a]·chip + t,
// the least-squares fit over the used points (Umeyama without reflection).
function similarity(lm) {
  const src = [];
  const dst = [];
  for (let i = 17; i < 68; i++) {
    if (!chipPointUsed(i)) continue;
    src.push([
      ((PADDING + MEAN_X[i - 17]) / (2 * PADDING + 1)) * CHIP,
      ((PADDING + MEAN_Y[i - 17]) / (2 * PADDING + 1)) * CHIP,
    ]);
    dst.push(lm[i]);
  }
  const n = src.length;
  let msx = 0; let msy = 0; let mdx = 0; let mdy = 0;
  for (let i = 0; i < n; i++) {
    msx += src[i][0]; msy += src[i][1]; mdx += dst[i][0]; mdy += dst[i][1];
  }
  msx /= n; msy /= n; mdx /= n; mdy /= n;
  let sxx = 0; let sab = 0; let sabx = 0;
  for (let i = 0; i < n; i++) {
    const x = src[i][0] - msx; const y = src[i][1] - msy;
    const u = dst[i][0] - mdx; const v = dst[i][1] - mdy;
    sxx += x * x + y * y;
    sab += x * u + y * v; // a·sxx
    sabx += x * v - y * u; // b·sxx
  }
  if (!(sxx > 0)) throw new Error('degenerate landmarks');
  const a = sab / sxx;
  const b = sabx / sxx;
  if (!(a * a + b * b > 1e-12)) throw new Error('landmarks collapse to a point');
  return { a, b, tx: mdx - (a * msx - b * msy), ty: mdy - (b * msx + a * msy) };
}

// extractChip samples the 150×150 chip; pixels outside the image are black
// (as dlib's extract_image_chip). When the face is larger than the chip each
// chip pixel averages k×k bilinear samples so that small edits are not
// aliased away.
function extractChip(img, lm) {
  const T = similarity(lm);
  const scale = Math.sqrt(T.a * T.a + T.b * T.b);
  const k = Math.max(1, Math.min(8, Math.ceil(scale - 1e-9)));
  const out = new Float32Array(CHIP * CHIP * 3);
  const { w, h, data } = img;
  const acc = [0, 0, 0];
  for (let r = 0; r < CHIP; r++) {
    for (let c = 0; c < CHIP; c++) {
      acc[0] = 0; acc[1] = 0; acc[2] = 0;
      for (let sy = 0; sy < k; sy++) {
        const cy = r + (sy + 0.5) / k - 0.5;
        for (let sx = 0; sx < k; sx++) {
          const cx = c + (sx + 0.5) / k - 0.5;
          const x = T.a * cx - T.b * cy + T.tx;
          const y = T.b * cx + T.a * cy + T.ty;
          const x0 = Math.floor(x); const y0 = Math.floor(y);
          const fx = x - x0; const fy = y - y0;
          for (let dy = 0; dy < 2; dy++) {
            const yy = y0 + dy;
            if (yy < 0 || yy >= h) continue;
            const wy = dy ? fy : 1 - fy;
            for (let dx = 0; dx < 2; dx++) {
              const xx = x0 + dx;
              if (xx < 0 || xx >= w) continue;
              const wgt = wy * (dx ? fx : 1 - fx);
              const o = (yy * w + xx) * 3;
              acc[0] += wgt * data[o]; acc[1] += wgt * data[o + 1]; acc[2] += wgt * data[o + 2];
            }
          }
        }
      }
      const o = (r * CHIP + c) * 3;
      const kk = k * k;
      for (let ch = 0; ch < 3; ch++) out[o + ch] = Math.min(255, Math.max(0, Math.round(acc[ch] / kk)));
    }
  }
  return out;
}

async function descriptorFromLandmarks(img, lm) {
  const chip = extractChip(img, lm);
  const t = tf.tensor3d(chip, [CHIP, CHIP, 3], 'float32');
  try {
    const d = await faceapi.nets.faceRecognitionNet.computeFaceDescriptor(t);
    return Array.from(d);
  } finally {
    t.dispose();
  }
}

// ---------------------------------------------------------------------------
// Operations

function detectorOptions(req) {
  const det = req.detector || 'ssd';
  const minScore = req.min_score === undefined ? 0.5 : req.min_score;
  if (!(typeof minScore === 'number' && minScore >= 0 && minScore <= 1)) {
    throw new Error(`min_score must be a number in [0,1], got ${JSON.stringify(req.min_score)}`);
  }
  if (det === 'ssd') return new faceapi.SsdMobilenetv1Options({ minConfidence: minScore, maxResults: 100 });
  if (det === 'tiny') {
    const size = req.input_size === undefined ? 416 : req.input_size;
    if (!Number.isInteger(size) || size % 32 !== 0 || size <= 0) {
      throw new Error(`input_size must be a positive multiple of 32, got ${JSON.stringify(req.input_size)}`);
    }
    return new faceapi.TinyFaceDetectorOptions({ inputSize: size, scoreThreshold: minScore });
  }
  throw new Error(`detector must be "ssd" or "tiny", got ${JSON.stringify(det)}`);
}

async function analyze(req) {
  const img = decodeImage(req.image);
  const options = detectorOptions(req);
  const t = toTensor(img);
  let dets;
  try {
    dets = await faceapi.detectAllFaces(t, options).withFaceLandmarks();
  } finally {
    t.dispose();
  }
  const wantDesc = req.descriptors !== false;
  const faces = [];
  for (const d of dets) {
    const box = d.detection.box;
    const lm = d.landmarks.positions.map((p) => [p.x, p.y]);
    const face = {
      box: [box.x, box.y, box.width, box.height],
      score: d.detection.score,
      landmarks: lm,
    };
    if (wantDesc) face.descriptor = await descriptorFromLandmarks(img, lm);
    faces.push(face);
  }
  faces.sort((p, q) => q.score - p.score);
  return { faces };
}

async function describe(req) {
  const img = decodeImage(req.image);
  checkLandmarks(req.landmarks);
  const descriptor = await descriptorFromLandmarks(img, req.landmarks);
  const out = { descriptor };
  if (req.return_chip) {
    const chip = extractChip(img, req.landmarks);
    out.chip = { width: CHIP, height: CHIP, rgb: Buffer.from(Uint8Array.from(chip)).toString('base64') };
  }
  return out;
}

async function handle(line, info) {
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    return { id: null, ok: false, error: `malformed JSON request: ${e.message}` };
  }
  if (!req || typeof req !== 'object' || Array.isArray(req)) {
    return { id: null, ok: false, error: 'request must be a JSON object' };
  }
  const id = req.id === undefined ? null : req.id;
  const t0 = process.hrtime.bigint();
  try {
    if (req.v !== undefined && req.v !== PROTOCOL) {
      throw new Error(`protocol version ${req.v} not supported (this sidecar speaks ${PROTOCOL})`);
    }
    let res;
    switch (req.op) {
      case 'ping': res = { info, tensors: tf.memory().numTensors }; break;
      case 'analyze': res = await analyze(req); break;
      case 'describe': res = await describe(req); break;
      default: throw new Error(`unknown op ${JSON.stringify(req.op)} (want ping, analyze or describe)`);
    }
    res.id = id;
    res.ok = true;
    res.ms = Number(process.hrtime.bigint() - t0) / 1e6;
    return res;
  } catch (e) {
    return { id, ok: false, error: e && e.message ? e.message : String(e) };
  }
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv);
  } catch (e) {
    log(e.message, { level: 'error' });
    process.exit(2);
  }
  let info;
  try {
    info = await init(opts);
  } catch (e) {
    log(`init failed: ${e && e.stack ? e.stack : e}`, { level: 'error' });
    process.stdout.write(JSON.stringify({ ready: false, protocol: PROTOCOL, error: String(e && e.message ? e.message : e) }) + '\n');
    process.exit(1);
  }
  info.protocol = PROTOCOL;
  process.stdout.write(JSON.stringify(Object.assign({ ready: true }, info)) + '\n');
  log('ready', info);

  // Requests are served one at a time, in order: the backend is
  // single-threaded, so queueing here costs nothing and keeps replies ordered.
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  let chain = Promise.resolve();
  rl.on('line', (line) => {
    if (line.trim() === '') return;
    chain = chain.then(async () => {
      const res = await handle(line, info);
      process.stdout.write(JSON.stringify(res) + '\n');
    });
  });
  rl.on('close', () => {
    chain.then(() => process.exit(0));
  });
}

process.on('unhandledRejection', (e) => log(`unhandled rejection: ${e && e.stack ? e.stack : e}`, { level: 'error' }));
process.on('uncaughtException', (e) => log(`uncaught exception: ${e && e.stack ? e.stack : e}`, { level: 'error' }));

main();
