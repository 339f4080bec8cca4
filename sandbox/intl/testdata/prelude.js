// Evaluated before every case of cases.txt, in Node and in goja alike.
var __show = function (v) {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'bigint') return v + 'n';
  if (v === undefined) return 'undefined';
  if (typeof v === 'function') return 'function';
  return JSON.stringify(v);
};
var d1 = new Date(Date.UTC(2024, 0, 2, 15, 4, 5, 123));
var d2 = new Date(Date.UTC(2024, 6, 14, 8, 30, 0, 0));
var d3 = new Date(Date.UTC(1999, 11, 31, 23, 59, 59, 999));
var d4 = new Date(Date.UTC(2024, 0, 5, 9, 0, 0, 0));
var nf = function (l, o) { return new Intl.NumberFormat(l, o); };
var dtf = function (l, o) { return new Intl.DateTimeFormat(l, o); };
var parts = function (ps) { return ps.map(function (p) { return p.type + ':' + p.value; }).join('|'); };
var err = function (f) { try { f(); return 'no error'; } catch (e) { return e.name; } };
var rp = function (ps) { return ps.map(function (p) { return p.type + ':' + p.value + ':' + p.source; }).join('|'); };
