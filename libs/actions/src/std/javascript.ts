import { ActionException, type ActionImplementation, success } from '../action';
import { evaluateJavaScript } from './javascript-sandbox';

const runScript: ActionImplementation['run'] = async (input, { config, ctx, signal }) => {
  const script = input['script'];
  if (typeof script !== 'string')
    throw new ActionException('JavaScriptAction failed: script must be a string');
  const timeLimitMs =
    ctx.timeoutMs !== undefined
      ? Math.min(ctx.timeoutMs, config.javascript.timeLimitMs)
      : config.javascript.timeLimitMs;
  try {
    return success(
      await evaluateJavaScript(
        script,
        input['context'] ?? null,
        { ...config.javascript, timeLimitMs },
        signal,
      ),
    );
  } catch (e) {
    throw new ActionException(`JavaScriptAction failed: ${e instanceof Error ? e.message : String(e)}`);
  }
};

/**
 * std.javascript(script, context): the script's return value, computed in the QuickJS sandbox of
 * javascript-sandbox.ts (worker threads; time, memory and stack limits; nothing of the host reachable).
 */
export const javascriptAction: ActionImplementation = {
  name: 'std.javascript',
  className: 'mistral.actions.std_actions.JavaScriptAction',
  run: runScript,
};

/** std.js: alias of std.javascript. */
export const jsAction: ActionImplementation = { ...javascriptAction, name: 'std.js' };
