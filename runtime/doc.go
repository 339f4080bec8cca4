// Package runtime is the transaction boundary that commits an untrusted
// tool call into a frozen, replayable result.
//
// Runtime.Execute is the pipeline, one stage per step, each with its own
// mutation budget:
//
//	identity     mint a token; parse the raw argument string losslessly and freeze it;
//	             capture finalizeContent from the definition visible now
//	gate         caller already cancelled → ABORTED_BEFORE_DISPATCH; unknown tool;
//	             code-only scopes reject model-direct calls (UNKNOWN_TOOL naming run_code)
//	pre-policy   allow | deny | ask (to the Approver); no rewrite arm
//	guards       deny-only owner vetoes; final
//	around       wrappers (timeout, retry, metrics) may replace the context and wrap the
//	             body, but the body always runs under the caller's cancellation too
//	body         value → lossless snapshot → output-schema check → freeze → render →
//	             presentationMeta (top-level calls only)
//	post-policy  accept (replace content OR value, never both) | block(feedback)
//	finalize     finalizeContent, exactly once for every outcome; content only
//	observers    see the frozen result; change nothing
//
// Ordinary failures are results with a code (registry.Code), never panics.
// The runtime writes no session events: the agent loop owns durability.
package runtime
