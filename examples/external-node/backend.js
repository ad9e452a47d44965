#!/usr/bin/env node
// An example dmlconform external backend in plain Node.js (no packages).
//
// It speaks the line protocol of docs/external-backend.md on stdin/stdout and
// implements a few element-wise operators on FLOAT32 and FLOAT16 (SIGN and
// IDENTITY also on the integer types); everything else is answered
// "not_supported".  It honours sizes, element strides (0 = broadcast) and
// in-place aliasing, and computes in double precision rounded once to the
// tensor's type.
//
//   dmlconform run --backend external \
//       --backend-arg cmd='node examples/external-node/backend.js' --op ACTIVATION_SOFTSIGN
//
// Test switches (used by the project's tests):
//   --die-on TEXT    exit with status 3 (after a line on stderr) on a case whose id contains TEXT
//   --hang-on TEXT   never answer a case whose id contains TEXT
"use strict";

const fs = require("fs");
const readline = require("readline");

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : null;
};
const dieOn = option("--die-on");
const hangOn = option("--hang-on");

// ---- .npy files (version 1.0-3.0 headers, 1-D, little-endian) -------------------------
const TYPES = {
  FLOAT32: { descr: "<f4", array: Float32Array },
  FLOAT16: { descr: "<f2", array: Uint16Array },   // raw bits, converted below
  FLOAT64: { descr: "<f8", array: Float64Array },
  INT8: { descr: "|i1", array: Int8Array },
  UINT8: { descr: "|u1", array: Uint8Array },
  INT16: { descr: "<i2", array: Int16Array },
  UINT16: { descr: "<u2", array: Uint16Array },
  INT32: { descr: "<i4", array: Int32Array },
  UINT32: { descr: "<u4", array: Uint32Array },
  INT64: { descr: "<i8", array: BigInt64Array },
  UINT64: { descr: "<u8", array: BigUint64Array },
};

function readNpy(file, dtype) {
  const bytes = fs.readFileSync(file);
  if (bytes.toString("latin1", 0, 6) !== "\x93NUMPY") throw new Error(`${file}: not a .npy file`);
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLength;
  const header = bytes.toString("latin1", major === 1 ? 10 : 12, start);
  const type = TYPES[dtype];
  if (!header.includes(`'descr': '${type.descr}'`)) throw new Error(`${file}: expected ${type.descr}: ${header}`);
  const count = (bytes.length - start) / type.array.BYTES_PER_ELEMENT;
  // Copy so that the typed array is aligned whatever the header length.
  const data = new type.array(count);
  new Uint8Array(data.buffer).set(bytes.subarray(start));
  return { bytes, start, data };
}

function writeNpy(file, npy) {
  // Keep the harness's header; replace the data.
  Buffer.from(npy.data.buffer).copy(npy.bytes, npy.start);
  fs.writeFileSync(file, npy.bytes);
}

// ---- float16 <-> number ------------------------------------------------------------------
function halfToNumber(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

function numberToHalf(x) {
  // Round to nearest, ties to even, from a double.
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  let a = Math.abs(x);
  if (a >= 65520) return sign | 0x7c00;               // rounds to infinity
  if (a < 2 ** -14) {                                 // subnormal (or zero)
    return sign | roundEven(a * 2 ** 24);
  }
  let exp = Math.floor(Math.log2(a));
  if (2 ** exp > a) exp -= 1;                         // guard log2 rounding
  if (2 ** (exp + 1) <= a) exp += 1;
  const mant = roundEven((a / 2 ** exp - 1) * 1024);  // may carry into the exponent
  return sign | (((exp + 15) << 10) + mant);
}

function roundEven(v) {
  const f = Math.floor(v);
  const d = v - f;
  if (d > 0.5 || (d === 0.5 && f % 2 === 1)) return f + 1;
  return f;
}

// ---- operators ---------------------------------------------------------------------------
const FLOATS = ["FLOAT32", "FLOAT16"];
const INTEGERS = ["INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64"];

// The doc: -1 if x < 0, 1 if x > 0, 0 otherwise (so -0 and NaN give 0).
const sign = (x) => (x > 0 ? 1 : x < 0 ? -1 : 0);

// Each: the data types it takes, and f(x, attributes) on doubles (or BigInt for 64-bit integers).
const OPS = {
  ACTIVATION_SOFTSIGN: { dtypes: FLOATS, f: (x) => x / (1 + Math.abs(x)) },
  ACTIVATION_HARD_SIGMOID: {
    dtypes: FLOATS,
    f: (x, a) => Math.max(0, Math.min(a.Alpha * x + a.Beta, 1)),
    attributes: ["Alpha", "Beta"],
  },
  ACTIVATION_SHRINK: {
    dtypes: FLOATS,
    // NaN propagates (the harness's stated policy where the doc is silent).
    f: (x, a) => (Number.isNaN(x) ? x : x > a.Threshold ? x - a.Bias : x < -a.Threshold ? x + a.Bias : 0),
    attributes: ["Bias", "Threshold"],
  },
  ELEMENT_WISE_SIGN: {
    dtypes: FLOATS.concat(INTEGERS),
    f: (x) => (typeof x === "bigint" ? (x > 0n ? 1n : x < 0n ? -1n : 0n) : sign(x)),
  },
  ELEMENT_WISE_IDENTITY: { dtypes: FLOATS.concat(INTEGERS, ["FLOAT64"]), f: (x) => x, raw: true },
};

const number = (v) => (v === "inf" ? Infinity : v === "-inf" ? -Infinity : v === "nan" ? NaN : Number(v));

function run(request) {
  const op = OPS[request.operator];
  if (!op) return { status: "not_supported", reason: `${request.operator} is not implemented` };
  if (!op.dtypes.includes(request.dtype)) {
    return { status: "not_supported", reason: `${request.operator} is not implemented for ${request.dtype}` };
  }
  const attributes = {};
  for (const [name, value] of Object.entries(request.attributes)) {
    if (!(op.attributes || []).includes(name)) {
      return { status: "not_supported", reason: `attribute ${name} is not implemented` };
    }
    attributes[name] = number(value);
  }
  const input = request.inputs[0];
  const output = request.outputs[0];
  const x = readNpy(input.file, input.dtype).data;     // read every input before writing any output
  const y = readNpy(output.file, output.dtype);
  const half = request.dtype === "FLOAT16";
  const single = request.dtype === "FLOAT32";
  const apply = (v) => {
    if (op.raw) return v;                                // identity copies the bits
    if (half) return numberToHalf(op.f(halfToNumber(v), attributes));
    if (single) return Math.fround(op.f(v, attributes));
    return op.f(v, attributes);                          // integers: exact
  };
  // Walk every logical index (row-major), through each tensor's element strides.
  const sizes = output.sizes;
  const total = sizes.reduce((a, b) => a * b, 1);
  const index = new Array(sizes.length).fill(0);
  for (let n = 0; n < total; n++) {
    let xi = 0;
    let yi = 0;
    for (let d = 0; d < sizes.length; d++) {
      xi += index[d] * input.strides[d];
      yi += index[d] * output.strides[d];
    }
    y.data[yi] = apply(x[xi]);
    for (let d = sizes.length - 1; d >= 0; d--) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  writeNpy(output.file, y);
  return { status: "ok" };
}

// ---- the protocol loop -------------------------------------------------------------------
const reply = (message) => process.stdout.write(JSON.stringify(message) + "\n");

const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.type === "hello") {
    reply({
      type: "hello",
      protocol: 1,
      name: "node-example",
      device: `Node.js ${process.version} (CPU)`,
      version: "0.1.0",
      feature_level: "6_4",
      flush_subnormals: false,
      ops: Object.keys(OPS).sort(),
    });
  } else if (message.type === "run") {
    if (dieOn && message.id.includes(dieOn)) {
      process.stderr.write(`example backend: dying on purpose on ${message.id}\n`);
      process.exit(3);
    }
    if (hangOn && message.id.includes(hangOn)) return;   // never answers
    let result;
    try {
      result = run(message);
    } catch (error) {
      result = { status: "error", message: String(error && error.message ? error.message : error) };
    }
    reply(Object.assign({ type: "result", id: message.id }, result));
  } else if (message.type === "bye") {
    lines.close();
  }
});
lines.on("close", () => process.exit(0));
