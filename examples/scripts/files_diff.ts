// Files: write, edit and read a file in the session's virtual workspace. The
// edit's presentationMeta carries a unified diff for the UI.
await tools.files_write({ path: "notes/todo.md", content: "- buy milk\n- call Bob\n" })
const edit = await tools.files_edit({ path: "notes/todo.md", old: "call Bob", new: "call Alice" })
const file = await tools.files_read({ path: "notes/todo.md" })
const { paths } = await tools.files_list({ prefix: "notes/" })
console.log(`replaced ${edit.replaced} occurrence(s) in ${edit.path}`)
return { paths, lines: file.lines, content: file.content }
