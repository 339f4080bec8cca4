// queueMicrotask: report fails the run with an exception the callback throws.
(function (report) {
	const resolved = Promise.resolve();
	const then = Promise.prototype.then;
	return {
		queueMicrotask(callback) {
			if (typeof callback !== "function") {
				throw new TypeError('The "callback" argument must be of type function');
			}
			then.call(resolved, () => {
				try {
					callback();
				} catch (e) {
					report(e);
				}
			});
		},
	}.queueMicrotask;
})
