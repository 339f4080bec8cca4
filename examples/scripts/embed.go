// Package scripts holds example run_code programs, each a TypeScript or
// JavaScript file here with its expected output under testdata/. FS embeds
// them so that binaries can offer them (the playground's example buttons).
package scripts

import "embed"

// FS holds the example programs: every *.ts and *.js file of this folder,
// at its top level.
//
//go:embed *.ts *.js
var FS embed.FS
