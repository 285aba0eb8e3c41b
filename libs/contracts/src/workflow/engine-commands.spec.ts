import { ENGINE_COMMAND_TYPES, engineCommand, isEngineCommandType } from './engine-commands';

describe('engine commands', () => {
  it.each(ENGINE_COMMAND_TYPES)('%s is recognised as an engine command type', (t) => {
    expect(isEngineCommandType(t)).toBe(true);
  });
  it.each(['engine.bogus', 'action.run', ''])('%p is not an engine command type', (t) => {
    expect(isEngineCommandType(t)).toBe(false);
  });
  it('builds an envelope with the given id, type and payload', () => {
    expect(engineCommand('c1', 'engine.start-execution', { executionId: 'e1' })).toEqual({
      id: 'c1',
      type: 'engine.start-execution',
      payload: { executionId: 'e1' },
    });
  });
});
