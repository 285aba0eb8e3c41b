/** Where a 0-based offset falls in a text: its line (1-based), column (1-based), the line's text and a caret under the column. Pure. */
export function caretOf(
  text: string,
  position: number,
): { line: number; column: number; lineText: string; caret: string } {
  const at = Math.max(0, Math.min(position, text.length));
  const start = text.lastIndexOf('\n', at - 1) + 1;
  const end = text.indexOf('\n', at);
  const lineText = text.slice(start, end < 0 ? undefined : end);
  const line = text.slice(0, start).split('\n').length;
  return { line, column: at - start + 1, lineText, caret: `${' '.repeat(at - start)}^` };
}
