import type { ExpressionHost } from '../host';
export function evaluateJinjaString(_text: string, _data: unknown, _host: ExpressionHost): unknown {
  throw new Error('todo');
}
export function jinjaSyntaxError(_text: string): string | null {
  return null;
}
