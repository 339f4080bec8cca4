// gen.mjs writes sandbox/intl/data from the Unicode CLDR JSON packages pinned in
// package.json (CLDR 48):
//
//	cd sandbox/intl/gen && npm ci && node gen.mjs
//
// Output:
//   data/supplemental.json.gz  plural rules, likely subtags, aliases, parent locales, hour
//                              cycles by region, currency digits, numbering systems, metazones,
//                              time zone ids, day periods, the locale list.
//   data/locale/<tag>.json.gz  one per locale: the parts of that locale's (resolved) CLDR data
//                              that package intl reads, stored as the difference from its parent
//                              locale (null deletes a key); package intl merges the chain.
//
// Only languages with CLDR "modern" coverage are kept, with all their regional variants.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const here = path.dirname(new URL(import.meta.url).pathname);
const out = path.join(here, '..', 'data');
const nm = path.join(here, 'node_modules');
const read = (p) => JSON.parse(fs.readFileSync(path.join(nm, p), 'utf8'));
const exists = (p) => fs.existsSync(path.join(nm, p));

const supp = (name) => read(`cldr-core/supplemental/${name}.json`).supplemental;

// ---- locales ----
const coverage = read('cldr-core/coverageLevels.json').coverageLevels;
const modernLangs = new Set(Object.entries(coverage).filter(([, v]) => v === 'modern').map(([k]) => k.split('-')[0]));
const allLocales = fs.readdirSync(path.join(nm, 'cldr-numbers-full/main'));
const locales = allLocales.filter((l) => l === 'und' || modernLangs.has(l.split('-')[0])).sort();
const parentLocales = supp('parentLocales').parentLocales.parentLocale;

function parentOf(tag) {
  for (;;) {
    if (tag === 'und') return null;
    if (parentLocales[tag]) tag = parentLocales[tag] === 'root' ? 'und' : parentLocales[tag];
    else {
      const i = tag.lastIndexOf('-');
      tag = i < 0 ? 'und' : tag.slice(0, i);
    }
    // Default-content locales (ca-ES for ca) have no files of their own.
    if (locales.includes(tag)) return tag;
  }
}

// ---- per-locale extraction ----
const pick = (o, keys) => {
  const r = {};
  for (const k of keys) if (o && o[k] !== undefined) r[k] = o[k];
  return r;
};
const stripAlt = (o) => {
  // Drops CLDR's alternative forms (-alt-ascii, -alt-variant, ...), which ICU does not use by default.
  if (typeof o !== 'object' || o === null) return o;
  const r = {};
  for (const [k, v] of Object.entries(o)) {
    if (k.includes('-alt-')) continue;
    r[k] = stripAlt(v);
  }
  return r;
};

// The simple units ECMA-402 sanctions, by their CLDR keys.
const sanctioned = {
  acre: 'area-acre', bit: 'digital-bit', byte: 'digital-byte', celsius: 'temperature-celsius',
  centimeter: 'length-centimeter', day: 'duration-day', degree: 'angle-degree',
  fahrenheit: 'temperature-fahrenheit', 'fluid-ounce': 'volume-fluid-ounce', foot: 'length-foot',
  gallon: 'volume-gallon', gigabit: 'digital-gigabit', gigabyte: 'digital-gigabyte', gram: 'mass-gram',
  hectare: 'area-hectare', hour: 'duration-hour', inch: 'length-inch', kilobit: 'digital-kilobit',
  kilobyte: 'digital-kilobyte', kilogram: 'mass-kilogram', kilometer: 'length-kilometer',
  liter: 'volume-liter', megabit: 'digital-megabit', megabyte: 'digital-megabyte', meter: 'length-meter',
  microsecond: 'duration-microsecond', mile: 'length-mile', 'mile-scandinavian': 'length-mile-scandinavian',
  milliliter: 'volume-milliliter', millimeter: 'length-millimeter', millisecond: 'duration-millisecond',
  minute: 'duration-minute', month: 'duration-month', nanosecond: 'duration-nanosecond', ounce: 'mass-ounce',
  percent: 'concentr-percent', petabyte: 'digital-petabyte', pound: 'mass-pound', second: 'duration-second',
  stone: 'mass-stone', terabit: 'digital-terabit', terabyte: 'digital-terabyte', week: 'duration-week',
  yard: 'length-yard', year: 'duration-year',
};

const compoundUnits = {
  'kilometer-per-hour': 'speed-kilometer-per-hour', 'mile-per-hour': 'speed-mile-per-hour',
  'meter-per-second': 'speed-meter-per-second', 'liter-per-kilometer': 'consumption-liter-per-kilometer',
  'mile-per-gallon': 'consumption-mile-per-gallon',
};

function numbersOf(tag) {
  const n = read(`cldr-numbers-full/main/${tag}/numbers.json`).main[tag].numbers;
  const systems = {};
  for (const k of Object.keys(n)) {
    const m = /^symbols-numberSystem-(.+)$/.exec(k);
    if (m) systems[m[1]] = true;
  }
  const num = {};
  for (const nu of Object.keys(systems)) {
    const dec = n[`decimalFormats-numberSystem-${nu}`] || {};
    const cur = n[`currencyFormats-numberSystem-${nu}`] || {};
    const misc = n[`miscPatterns-numberSystem-${nu}`] || {};
    const unitPat = {};
    for (const [k, v] of Object.entries(cur)) {
      const m = /^unitPattern-count-(\w+)$/.exec(k);
      if (m) unitPat[m[1]] = v;
    }
    num[nu] = {
      symbols: stripAlt(n[`symbols-numberSystem-${nu}`]),
      decimal: dec.standard,
      decimalLong: dec.long && stripAlt(dec.long.decimalFormat),
      decimalShort: dec.short && stripAlt(dec.short.decimalFormat),
      scientific: (n[`scientificFormats-numberSystem-${nu}`] || {}).standard,
      percent: (n[`percentFormats-numberSystem-${nu}`] || {}).standard,
      currency: cur.standard,
      currencyAlpha: cur['standard-alphaNextToNumber'],
      currencyNoSymbol: cur['standard-noCurrency'],
      accounting: cur.accounting,
      accountingAlpha: cur['accounting-alphaNextToNumber'],
      accountingNoSymbol: cur['accounting-noCurrency'],
      currencyShort: cur.short && stripAlt(cur.short.standard),
      currencySpacing: cur.currencySpacing,
      unitPattern: unitPat,
      range: misc.range,
      approximately: misc.approximately,
    };
  }
  const r = {
    nu: n.defaultNumberingSystem,
    native: (n.otherNumberingSystems || {}).native,
    minimumGroupingDigits: Number(n.minimumGroupingDigits || 1),
    systems: num,
  };
  const cur = read(`cldr-numbers-full/main/${tag}/currencies.json`).main[tag].numbers.currencies;
  r.currencies = {};
  for (const [code, c] of Object.entries(cur)) {
    const e = {};
    if (c.displayName && c.displayName !== code) e.name = c.displayName;
    for (const [k, v] of Object.entries(c)) {
      const m = /^displayName-count-(\w+)$/.exec(k);
      if (m) (e.plural ||= {})[m[1]] = v;
    }
    if (c.symbol && c.symbol !== code) e.symbol = c.symbol;
    if (c['symbol-alt-narrow'] && c['symbol-alt-narrow'] !== (c.symbol || code)) e.narrow = c['symbol-alt-narrow'];
    if (Object.keys(e).length) r.currencies[code] = e;
  }
  return r;
}

function gregorianOf(tag) {
  const g = read(`cldr-dates-full/main/${tag}/ca-gregorian.json`).main[tag].dates.calendars.gregorian;
  const dtf = g.dateTimeFormats;
  const af = {};
  for (const [k, v] of Object.entries(dtf.availableFormats)) {
    if (k.includes('-alt-')) continue;
    // The week-of skeletons (MMMMW, yw) are never requested by ECMA-402.
    if (k.includes('-count-')) continue;
    af[k] = v;
  }
  const iv = {};
  for (const [k, v] of Object.entries(dtf.intervalFormats)) {
    if (k.includes('-alt-')) continue;
    iv[k] = typeof v === 'string' ? v : stripAlt(v);
  }
  return {
    months: stripAlt(g.months),
    days: stripAlt(g.days),
    quarters: stripAlt(g.quarters),
    dayPeriods: g.dayPeriods, // alt-variant am/pm are not used, but dropping keys here is cheap later
    eras: stripAlt(g.eras),
    dateFormats: stripAlt(g.dateFormats),
    timeFormats: stripAlt(g.timeFormats),
    dateTimeFormats: pick(dtf, ['full', 'long', 'medium', 'short']),
    atTime: g['dateTimeFormats-atTime'] ? g['dateTimeFormats-atTime'].standard : undefined,
    availableFormats: af,
    appendItems: dtf.appendItems,
    intervalFormats: iv,
  };
}

function zonesOf(tag) {
  const z = read(`cldr-dates-full/main/${tag}/timeZoneNames.json`).main[tag].dates.timeZoneNames;
  const r = pick(z, ['hourFormat', 'gmtFormat', 'gmtZeroFormat', 'regionFormat', 'regionFormat-type-daylight',
    'regionFormat-type-standard', 'fallbackFormat']);
  // Zone entries, flattened to IANA ids: exemplar cities and zone-specific names.
  r.zones = {};
  const walk = (o, prefix) => {
    for (const [k, v] of Object.entries(o)) {
      const id = prefix ? `${prefix}/${k}` : k;
      if (v && v._type === 'zone') {
        const e = {};
        if (v.exemplarCity) e.city = v.exemplarCity;
        if (v.long) e.long = v.long;
        if (v.short) e.short = v.short;
        r.zones[id] = e;
      } else if (typeof v === 'object') walk(v, id);
    }
  };
  walk(z.zone, '');
  r.metazones = z.metazone;
  return r;
}

function fieldsOf(tag) {
  const f = read(`cldr-dates-full/main/${tag}/dateFields.json`).main[tag].dates.fields;
  const r = {};
  for (const unit of ['era', 'year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second', 'weekday', 'dayperiod', 'zone',
    'sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat']) {
    for (const suffix of ['', '-short', '-narrow']) {
      const e = f[unit + suffix];
      if (!e) continue;
      const o = {};
      if (e.displayName) o.name = e.displayName;
      for (const [k, v] of Object.entries(e)) {
        let m = /^relative-type-(-?\d+)$/.exec(k);
        if (m) (o.relative ||= {})[m[1]] = v;
        m = /^relativeTime-type-(future|past)$/.exec(k);
        if (m) {
          const c = {};
          for (const [ck, cv] of Object.entries(v)) {
            const cm = /^relativeTimePattern-count-(\w+)$/.exec(ck);
            if (cm) c[cm[1]] = cv;
          }
          o[m[1]] = c;
        }
      }
      r[unit + suffix] = o;
    }
  }
  return r;
}

function listsOf(tag) {
  const l = read(`cldr-misc-full/main/${tag}/listPatterns.json`).main[tag].listPatterns;
  const r = {};
  for (const [k, v] of Object.entries(l)) r[k.replace(/^listPattern-type-/, '')] = v;
  return r;
}

// unitOf is a CLDR unit entry as package intl reads it: its name and its patterns by plural
// category (and its per-unit pattern, when perUnit says to keep it).
function unitOf(e, perUnit) {
  const o = { name: e.displayName };
  for (const [k, v] of Object.entries(e)) {
    const m = /^unitPattern-count-(\w+)$/.exec(k);
    if (m) (o.pattern ||= {})[m[1]] = v;
  }
  if (perUnit && e.perUnitPattern) o.per = e.perUnitPattern;
  return o;
}

function unitsOf(tag) {
  const u = read(`cldr-units-full/main/${tag}/units.json`).main[tag].units;
  const r = {};
  for (const width of ['long', 'short', 'narrow']) {
    const w = {};
    for (const [name, key] of Object.entries(sanctioned)) {
      if (u[width][key]) w[name] = unitOf(u[width][key], true);
    }
    // The compound units CLDR names itself (50 km/h rather than 50 km/hr).
    for (const [name, key] of Object.entries(compoundUnits)) {
      if (u[width][key]) w[name] = unitOf(u[width][key], false);
    }
    r[width] = w;
  }
  return r;
}

function unitPerOf(tag) {
  const u = read(`cldr-units-full/main/${tag}/units.json`).main[tag].units;
  const r = {};
  for (const width of ['long', 'short', 'narrow']) if (u[width].per) r[width] = u[width].per.compoundUnitPattern;
  return r;
}

function namesOf(tag) {
  const base = `cldr-localenames-full/main/${tag}`;
  if (!exists(`${base}/languages.json`)) return undefined;
  const get = (f, k) => read(`${base}/${f}.json`).main[tag].localeDisplayNames[k];
  const types = get('localeDisplayNames', 'types') || {};
  return {
    languages: get('languages', 'languages'),
    scripts: get('scripts', 'scripts'),
    regions: get('territories', 'territories'),
    calendars: types.calendar,
    pattern: get('localeDisplayNames', 'localeDisplayPattern'),
  };
}

function localeData(tag) {
  return {
    numbers: numbersOf(tag),
    gregorian: gregorianOf(tag),
    zones: zonesOf(tag),
    fields: fieldsOf(tag),
    lists: listsOf(tag),
    units: unitsOf(tag),
    unitPer: unitPerOf(tag),
    names: namesOf(tag),
  };
}

// diff returns what turns base into o: changed and added keys, null for removed ones.
function diff(o, base) {
  if (typeof o !== 'object' || o === null || typeof base !== 'object' || base === null || Array.isArray(o)) {
    return JSON.stringify(o) === JSON.stringify(base) ? undefined : o;
  }
  const r = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    const d = diff(v, base[k]);
    if (d !== undefined) r[k] = d;
  }
  for (const k of Object.keys(base)) if (o[k] === undefined && base[k] !== undefined) r[k] = null;
  return Object.keys(r).length ? r : undefined;
}

fs.rmSync(path.join(out, 'locale'), { recursive: true, force: true });
fs.mkdirSync(path.join(out, 'locale'), { recursive: true });
const cache = new Map();
const dataOf = (tag) => {
  if (!cache.has(tag)) cache.set(tag, JSON.parse(JSON.stringify(localeData(tag))));
  return cache.get(tag);
};
const gz = (o) => zlib.gzipSync(JSON.stringify(o), { level: 9 });
let total = 0;
const parents = {};
for (const tag of locales) {
  const p = parentOf(tag);
  let d;
  if (p && !locales.includes(p)) throw new Error(`${tag}: parent ${p} not kept`);
  if (p) {
    parents[tag] = p;
    d = diff(dataOf(tag), dataOf(p)) || {};
  } else {
    d = dataOf(tag);
  }
  const b = gz(d);
  total += b.length;
  fs.writeFileSync(path.join(out, 'locale', `${tag}.json.gz`), b);
}

// ---- supplemental ----
const plurals = {};
const pluralRules = (o) => {
  const r = {};
  for (const [k, v] of Object.entries(o)) r[k.replace(/^pluralRule-count-/, '')] = v.split('@')[0].trim();
  return r;
};
for (const [lang, o] of Object.entries(supp('plurals')['plurals-type-cardinal'])) (plurals[lang] ||= {}).cardinal = pluralRules(o);
for (const [lang, o] of Object.entries(supp('ordinals')['plurals-type-ordinal'])) (plurals[lang] ||= {}).ordinal = pluralRules(o);

const numberingSystems = {};
for (const [k, v] of Object.entries(supp('numberingSystems').numberingSystems)) {
  if (v._type === 'numeric') numberingSystems[k] = v._digits;
}

const currencyDigits = {};
for (const [k, v] of Object.entries(supp('currencyData').currencyData.fractions)) {
  if (k !== 'DEFAULT') currencyDigits[k] = Number(v._digits);
}

const hourCycles = {};
for (const [k, v] of Object.entries(supp('timeData').timeData)) hourCycles[k] = { allowed: v._allowed, preferred: v._preferred };

// Metazone history per IANA zone: [[metazone, from, to], ...] with times as CLDR writes them.
const metazoneOf = {};
const mzInfo = supp('metaZones').metaZones.metazoneInfo.timezone;
const walkZones = (o, prefix) => {
  for (const [k, v] of Object.entries(o)) {
    const id = prefix ? `${prefix}/${k}` : k;
    if (Array.isArray(v)) {
      metazoneOf[id] = v.map((u) => [u.usesMetazone._mzone, u.usesMetazone._from || '', u.usesMetazone._to || '']);
    } else walkZones(v, id);
  }
};
walkZones(mzInfo, '');
// Golden zones: metazone -> territory -> zone.
const golden = {};
for (const m of supp('metaZones').metaZones.metazones) {
  (golden[m.mapZone._other] ||= {})[m.mapZone._territory] = m.mapZone._type;
}

// Time zone ids: every alias -> the CLDR canonical id (the first alias), and the zone's
// territory (the first two letters of its BCP 47 id, when they are a region).
const tz = read('cldr-bcp47/bcp47/timezone.json').keyword.u.tz;
const zoneIds = {};
const zoneRegion = {};
for (const [short, v] of Object.entries(tz)) {
  if (typeof v !== 'object' || !v._alias) continue;
  const names = v._alias.split(' ');
  if (names[0].startsWith('Etc/Unknown')) continue;
  for (const n of names) zoneIds[n] = names[0];
  if (/^[a-z]{2}/.test(short) && short.length > 2 && !['ut', 'un'].includes(short.slice(0, 2))) {
    zoneRegion[names[0]] = short.slice(0, 2).toUpperCase();
  }
}

const aliases = supp('aliases').metadata.alias;
const aliasMap = (o) => {
  const r = {};
  for (const [k, v] of Object.entries(o)) r[k] = v._replacement;
  return r;
};

const dayPeriods = supp('dayPeriods').dayPeriodRuleSet;

const supplemental = {
  version: supp('plurals').version._cldrVersion || '48',
  locales,
  defaultContent: read('cldr-core/defaultContent.json').defaultContent.filter((t) => modernLangs.has(t.split('-')[0])),
  parents,
  plurals,
  numberingSystems,
  currencyDigits,
  hourCycles,
  metazoneOf,
  golden,
  zoneIds,
  zoneRegion,
  primaryZones: supp('primaryZones').primaryZones,
  // ICU's root has symbols for the Arabic-script digit systems, which CLDR JSON's und lacks;
  // a locale without its own symbols for them uses these.
  rootSymbols: {
    arab: stripAlt(read('cldr-numbers-full/main/ar/numbers.json').main.ar.numbers['symbols-numberSystem-arab']),
    arabext: stripAlt(read('cldr-numbers-full/main/fa/numbers.json').main.fa.numbers['symbols-numberSystem-arabext']),
  },
  likelySubtags: supp('likelySubtags').likelySubtags,
  languageAlias: aliasMap(aliases.languageAlias),
  scriptAlias: aliasMap(aliases.scriptAlias),
  territoryAlias: aliasMap(aliases.territoryAlias),
  variantAlias: aliasMap(aliases.variantAlias),
  dayPeriods,
};
const sb = gz(supplemental);
fs.writeFileSync(path.join(out, 'supplemental.json.gz'), sb);
console.log(`${locales.length} locales, ${(total / 1024).toFixed(0)} KiB; supplemental ${(sb.length / 1024).toFixed(0)} KiB`);
