// Package githubapi is test support for tool discovery: it turns GitHub's
// published REST descriptions (the @octokit/openapi npm peer installed by
// .ci/node-deps into catalog/testdata/github) into a real catalog of tools,
// through package openapi, and measures how findable those tools are.
//
// Tools and ToolsN build catalogs of up to about 2,500 tools; LoadTasks
// reads the labeled tasks of catalog/testdata/tasks.json (a sentence a model
// has in mind, and the operations that serve it); Recall scores a ranker on
// them; BM25 is the floor every ranker must beat.
//
// When the peer is not installed, the loaders return an error wrapping
// ErrMissing, so tests can skip.
package githubapi
