// Object.groupBy and Map.groupBy (ES2024).
(function () {
	"use strict";
	function each(items, callback, add) {
		if (items === null || items === undefined) {
			throw new TypeError("groupBy called on null or undefined");
		}
		if (typeof callback !== "function") {
			throw new TypeError(String(callback) + " is not a function");
		}
		let k = 0;
		for (const value of items) {
			add(callback(value, k++), value);
		}
	}
	const objectMethods = {
		groupBy(items, callback) {
			const groups = Object.create(null);
			each(items, callback, (key, value) => {
				key = typeof key === "symbol" ? key : String(key);
				if (Object.prototype.hasOwnProperty.call(groups, key)) {
					groups[key].push(value);
				} else {
					Object.defineProperty(groups, key, {value: [value], writable: true, enumerable: true, configurable: true});
				}
			});
			return groups;
		},
	};
	const mapMethods = {
		groupBy(items, callback) {
			const groups = new Map();
			each(items, callback, (key, value) => {
				if (key === 0) key = 0; // -0 → +0
				const group = groups.get(key);
				if (group) group.push(value);
				else groups.set(key, [value]);
			});
			return groups;
		},
	};
	Object.defineProperty(Object, "groupBy", {value: objectMethods.groupBy, writable: true, configurable: true});
	Object.defineProperty(Map, "groupBy", {value: mapMethods.groupBy, writable: true, configurable: true});
})
