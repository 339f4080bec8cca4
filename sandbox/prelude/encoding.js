// TextEncoder and TextDecoder (WHATWG Encoding): UTF-8, UTF-16LE/BE and windows-1252.
// natives: encode(string) → Uint8Array; encodeInto(string, Uint8Array) → [read, written];
// decode(bytes, encoding, fatal, stripBOM, stream) → [string, pendingBytes]; bytes(source)
// → Uint8Array view of an ArrayBuffer, typed array or DataView.
(function (natives) {
	"use strict";
	const labels = {
		"utf-8": ["unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8", "x-unicode20utf8"],
		"utf-16le": ["csunicode", "iso-10646-ucs-2", "ucs-2", "unicode", "unicodefeff", "utf-16", "utf-16le"],
		"utf-16be": ["unicodefffe", "utf-16be"],
		"windows-1252": ["ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1",
			"iso-ir-100", "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1", "us-ascii", "windows-1252", "x-cp1252"],
	};
	const byLabel = new Map();
	for (const name of Object.keys(labels)) for (const l of labels[name]) byLabel.set(l, name);

	class TextEncoder {
		get encoding() { return "utf-8"; }
		encode(input = "") {
			return new Uint8Array(natives.encode(String(input)));
		}
		encodeInto(source, destination) {
			if (!(destination instanceof Uint8Array)) {
				throw new TypeError('The "dest" argument must be an instance of Uint8Array.');
			}
			const [read, written] = natives.encodeInto(String(source), destination);
			return {read, written};
		}
	}
	Object.defineProperty(TextEncoder.prototype, Symbol.toStringTag, {value: "TextEncoder", configurable: true});

	class TextDecoder {
		#encoding;
		#fatal;
		#ignoreBOM;
		#pending = null;
		#bomSeen = false;
		constructor(label = "utf-8", options = undefined) {
			const name = byLabel.get(String(label).trim().toLowerCase());
			if (!name) throw new RangeError('The "' + String(label) + '" encoding is not supported');
			const o = options === undefined || options === null ? {} : options;
			this.#encoding = name;
			this.#fatal = !!o.fatal;
			this.#ignoreBOM = !!o.ignoreBOM;
		}
		get encoding() { return this.#encoding; }
		get fatal() { return this.#fatal; }
		get ignoreBOM() { return this.#ignoreBOM; }
		decode(input = undefined, options = undefined) {
			const stream = !!(options && options.stream);
			let bytes = input === undefined ? new Uint8Array(0) : natives.bytes(input);
			if (this.#pending) {
				const joined = new Uint8Array(this.#pending.length + bytes.length);
				joined.set(this.#pending, 0);
				joined.set(bytes, this.#pending.length);
				bytes = joined;
				this.#pending = null;
			}
			const stripBOM = !this.#ignoreBOM && !this.#bomSeen;
			const [text, pending] = natives.decode(bytes, this.#encoding, this.#fatal, stripBOM, stream);
			if (stream) {
				if (bytes.length - pending > 0) this.#bomSeen = true;
				if (pending > 0) this.#pending = bytes.slice(bytes.length - pending);
			} else {
				this.#bomSeen = false;
			}
			return text;
		}
	}
	Object.defineProperty(TextDecoder.prototype, Symbol.toStringTag, {value: "TextDecoder", configurable: true});
	return {TextEncoder, TextDecoder};
})
