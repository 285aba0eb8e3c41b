import { eventParams, parseNotification, topicOfRoutingKey } from './notification';
import { eventTriggerExecutionDescription, triggersToFire } from './event-trigger-firing';

const envelope = (message: Record<string, unknown>) =>
  Buffer.from(JSON.stringify({ 'oslo.version': '2.0', 'oslo.message': JSON.stringify(message) }));

describe('oslo.messaging notifications', () => {
  it('reads the 2.0 envelope: id, event type, publisher, timestamp, payload and the _context_ keys', () => {
    const n = parseNotification(
      envelope({
        message_id: 'm-1',
        publisher_id: 'compute.host1',
        event_type: 'compute.instance.create.end',
        priority: 'INFO',
        payload: { a: 1 },
        timestamp: '2026-11-23 10:00:00.000001',
        _unique_id: 'u-1',
        _context_project_id: 'p',
        _context_user_id: 'u',
      }),
    );
    expect(n).toEqual({
      messageId: 'm-1',
      eventType: 'compute.instance.create.end',
      publisherId: 'compute.host1',
      timestamp: '2026-11-23 10:00:00.000001',
      payload: { a: 1 },
      context: { project_id: 'p', user_id: 'u' },
    });
    expect(eventParams(n as never)).toEqual({
      service: 'compute.host1',
      project_id: 'p',
      user_id: 'u',
      timestamp: '2026-11-23 10:00:00.000001',
    });
  });

  it('accepts a bare message, falls back to _unique_id and then to a hash of the body', () => {
    expect(
      parseNotification(Buffer.from(JSON.stringify({ event_type: 'e', _unique_id: 'u-9' }))),
    ).toMatchObject({ messageId: 'u-9', context: {} });
    const body = Buffer.from(JSON.stringify({ event_type: 'e' }));
    const a = parseNotification(body) as { messageId: string };
    expect(a.messageId).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((parseNotification(Buffer.from(body)) as { messageId: string }).messageId).toBe(a.messageId);
  });

  it('says why a message is not a notification', () => {
    expect(parseNotification(Buffer.from('nope'))).toEqual({ error: 'body is not JSON' });
    expect(parseNotification(Buffer.from('[1]'))).toEqual({ error: 'body is not a JSON object' });
    expect(parseNotification(Buffer.from(JSON.stringify({ 'oslo.message': '{' })))).toEqual({
      error: 'oslo.message is not JSON',
    });
    expect(parseNotification(envelope({ payload: {} }))).toEqual({ error: 'message has no event_type' });
  });

  it('takes the topic from a <topic>.<priority> routing key', () => {
    expect(topicOfRoutingKey('notifications.info')).toBe('notifications');
    expect(topicOfRoutingKey('versioned_notifications.error')).toBe('versioned_notifications');
    expect(topicOfRoutingKey('a.b.audit')).toBe('a.b');
    expect(topicOfRoutingKey('notifications.sample')).toBeNull();
    expect(topicOfRoutingKey('info')).toBeNull();
  });

  it('fires public triggers and those of the notification project only, described as Mistral does', () => {
    const t = (id: string, projectId: string, scope: 'private' | 'public') =>
      ({ id, projectId, scope }) as never;
    const n = { context: { project_id: 'p1' } } as never;
    expect(
      triggersToFire([t('a', 'p1', 'private'), t('b', 'p2', 'private'), t('c', 'p2', 'public')], n).map(
        (x: { id: string }) => x.id,
      ),
    ).toEqual(['a', 'c']);
    expect(eventTriggerExecutionDescription({ id: 'i', name: 'n' })).toBe(
      '{"description": "Workflow execution created by event trigger \'(i)\'.", "triggered_by": {"type": "event_trigger", "id": "i", "name": "n"}}',
    );
  });
});
