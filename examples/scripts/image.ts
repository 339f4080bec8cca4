// A tool's content may carry an image; the program sees the value, and the
// image reaches the model through the run_code result's contexts.
const swatch = await tools.util_swatch({ color: "#ff8800" })
return `a ${swatch.width}x${swatch.height} ${swatch.mime} swatch`
