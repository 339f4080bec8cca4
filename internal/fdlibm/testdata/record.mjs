// Records V8's Math.sin, Math.cos and Math.tan for a fixed set of arguments into v8.json, as
// IEEE 754 bit patterns in hex: node internal/fdlibm/testdata/record.mjs (Node 20 and 24 agree).
import {writeFileSync} from "node:fs";
import {dirname, join} from "node:path";
import {fileURLToPath} from "node:url";

let seed = 1;
const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
const xs = [0, -0, 0.3, 0.6744, 0.78125, 2 ** -27, 2 ** -28, 2 ** -30, 1e-300, 5e-324, Infinity, -Infinity, NaN, Math.PI / 4, 3 * Math.PI / 4];
for (let k = 1; k <= 400; k++) xs.push(k * Math.PI / 2, -k * Math.PI / 4, k / 100);
for (let i = 0; i < 500; i++) xs.push((random() - 0.5) * 2 * Math.PI, (random() - 0.5) * 200, (random() - 0.5) * 1.6e6);
const bits = new BigUint64Array(1);
const f64 = new Float64Array(bits.buffer);
const hex = (x) => { f64[0] = x; return bits[0].toString(16); };
const rows = xs.map((x) => [x, Math.sin(x), Math.cos(x), Math.tan(x)].map(hex));
writeFileSync(join(dirname(fileURLToPath(import.meta.url)), "v8.json"), JSON.stringify(rows) + "\n");
