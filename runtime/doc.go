// Package runtime is the transaction boundary that commits an untrusted
// tool call into a frozen, replayable result.
//
// Runtime.Execute is the pipeline, one stage per step, each with its own
// mutation budget (Execute is Prepare followed by Prepared.Run; a scheduler
// such as Batch prepares a call when its turn to start comes, to learn its
// concurrency verdict, and runs it when there is room):
//
//	identity     mint a token; resolve the tool in the live view once (or in
//	             Request.View: a nested call's run's view) (capturing
//	             finalizeContent); read the raw argument string once, losslessly, and
//	             freeze it; validate it and decide the concurrency verdict once
//	gate         caller already cancelled → ABORTED_BEFORE_DISPATCH; unknown tool;
//	             code-only scopes reject model-direct calls (UNKNOWN_TOOL naming run_code)
//	pre-policy   allow | deny | ask (to the Approver); no rewrite arm. Arguments that
//	             fail the tool's schema are INVALID_ARGS before an ask reaches a person
//	             (a guard's veto still wins); otherwise when the body would run
//	guards       deny-only owner vetoes; final
//	around       wrappers (Timeout, which package app mounts; Retry; an embedder's own)
//	             may replace the context and wrap the body, but the body always runs
//	             under the caller's cancellation too
//	body         value → lossless snapshot → output-schema check → freeze → render →
//	             presentationMeta (top-level calls only)
//	post-policy  Accept | ReplaceContent | ReplaceValue | Block: never content and value
//	finalize     finalizeContent, exactly once for every outcome; content only
//	observers    see the frozen result; change nothing
//
// The stages before dispatch can only refuse (they return a *registry.Error);
// post-policy decides with a sum type. Ordinary failures are results with a
// code (registry.Code), never panics, and normalization is total over hostile
// errors (registry.ErrorIs, ErrorAs, SafeString). The runtime writes no
// session events: the agent loop owns durability.
//
// One tool nests calls: the registry's code transport (run_code). Its body
// is the runtime's nesting body (SetNestingBody), given a Nesting: its own
// token as the parent of the calls it issues, its approver, its view (the
// one all its calls resolve in) and the caller's RunOptions. That handle is
// the only way back into the pipeline from a body.
package runtime
