// performance: now() on the run's clock (milliseconds since the run started), timeOrigin,
// and user timing marks and measures. natives: now(), origin.
(function (natives) {
	"use strict";
	const entries = [];
	class PerformanceEntry {
		constructor(name, entryType, startTime, duration, detail) {
			Object.defineProperties(this, {
				name: {value: name, enumerable: true},
				entryType: {value: entryType, enumerable: true},
				startTime: {value: startTime, enumerable: true},
				duration: {value: duration, enumerable: true},
				detail: {value: detail === undefined ? null : detail, enumerable: true},
			});
		}
		toJSON() {
			return {name: this.name, entryType: this.entryType, startTime: this.startTime, duration: this.duration, detail: this.detail};
		}
	}
	function timeOf(v) {
		if (typeof v === "number") return v;
		const m = entries.findLast((e) => e.entryType === "mark" && e.name === String(v));
		if (!m) throw new SyntaxError("The \"" + String(v) + "\" performance mark has not been set");
		return m.startTime;
	}
	const performance = {
		now() {
			return natives.now();
		},
		get timeOrigin() {
			return natives.origin;
		},
		mark(name, options = undefined) {
			const start = options && options.startTime !== undefined ? Number(options.startTime) : natives.now();
			const e = new PerformanceEntry(String(name), "mark", start, 0, options && options.detail);
			entries.push(e);
			return e;
		},
		measure(name, start = undefined, end = undefined) {
			let s = 0, e = natives.now(), detail;
			if (start !== null && typeof start === "object") {
				if (start.start !== undefined) s = timeOf(start.start);
				if (start.end !== undefined) e = timeOf(start.end);
				if (start.duration !== undefined && start.end === undefined) e = s + Number(start.duration);
				detail = start.detail;
			} else {
				if (start !== undefined) s = timeOf(start);
				if (end !== undefined) e = timeOf(end);
			}
			const m = new PerformanceEntry(String(name), "measure", s, e - s, detail);
			entries.push(m);
			return m;
		},
		getEntries() {
			return entries.slice();
		},
		getEntriesByName(name, type = undefined) {
			return entries.filter((e) => e.name === String(name) && (type === undefined || e.entryType === type));
		},
		getEntriesByType(type) {
			return entries.filter((e) => e.entryType === String(type));
		},
		clearMarks(name = undefined) {
			for (let i = entries.length - 1; i >= 0; i--) {
				if (entries[i].entryType === "mark" && (name === undefined || entries[i].name === String(name))) entries.splice(i, 1);
			}
		},
		clearMeasures(name = undefined) {
			for (let i = entries.length - 1; i >= 0; i--) {
				if (entries[i].entryType === "measure" && (name === undefined || entries[i].name === String(name))) entries.splice(i, 1);
			}
		},
		toJSON() {
			return {timeOrigin: natives.origin};
		},
	};
	Object.defineProperty(performance, Symbol.toStringTag, {value: "Performance", configurable: true});
	return performance;
})
