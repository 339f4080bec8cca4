// A failed call rejects with a ToolCallError; catch it and carry on.
const outcomes: string[] = []
try {
  await tools.util_fail({ message: "boom" })
} catch (e) {
  if (e instanceof ToolCallError) {
    console.log(e.name, e.toolName, e.message)
    outcomes.push(`${e.toolName} failed: ${e.message}`)
  } else {
    throw e
  }
}
const ok = await tools.math_add({ a: 1, b: 1 })
outcomes.push(`math_add gave ${ok.sum}`)
return outcomes
