import { ConflictError, InternalError, NotFoundError, OverLimitError } from '@osc/errors';
import { NotFoundException } from '@nestjs/common';
import { DATA_EXCEPTION_MESSAGE, cinderErrorBody, mistralErrorBody, toWireError } from './error-bodies';

describe('error bodies', () => {
  it('renders Mistral WSME and text faults', () => {
    expect(mistralErrorBody(404, 'nope')).toEqual({
      faultcode: 'Client',
      faultstring: 'nope',
      debuginfo: null,
    });
    expect(mistralErrorBody(500, 'x')).toEqual({ faultcode: 'Server', faultstring: 'x', debuginfo: null });
    expect(mistralErrorBody(400, 'bad', 'text')).toEqual({ faultstring: 'bad' });
  });
  it.each([
    [400, 'badRequest'],
    [401, 'unauthorized'],
    [403, 'forbidden'],
    [404, 'itemNotFound'],
    [405, 'badMethod'],
    [409, 'conflictingRequest'],
    [413, 'overLimit'],
    [415, 'badMediaType'],
    [501, 'notImplemented'],
    [503, 'serviceUnavailable'],
    [406, 'computeFault'],
    [500, 'computeFault'],
  ])('names the Cinder fault for %i', (status, name) => {
    expect(cinderErrorBody(status, 'm')).toEqual({ [name]: { code: status, message: 'm' } });
  });
  it('carries retryAfter for over-limit', () => {
    const w = toWireError('block-storage', new OverLimitError('slow down', 30), 'req-1');
    expect(w.status).toBe(413);
    expect(w.headers['retry-after']).toBe('30');
    expect(w.body).toEqual({ overLimit: { code: 413, message: 'slow down', retryAfter: '30' } });
  });
  it('maps domain errors and hides internals', () => {
    expect(
      toWireError(
        'workflow',
        new NotFoundError('Workflow', 'x', 'Workflow not found [workflow_identifier=x]'),
        'r',
      ).status,
    ).toBe(404);
    expect(toWireError('block-storage', new ConflictError('dup'), 'r').body).toEqual({
      conflictingRequest: { code: 409, message: 'dup' },
    });
    const internal = toWireError('workflow', new InternalError('secret detail'), 'req-9');
    expect(internal.status).toBe(500);
    expect(JSON.stringify(internal.body)).not.toContain('secret');
    const unknown = toWireError('block-storage', new TypeError('x is undefined'), 'req-9');
    expect(unknown.status).toBe(500);
    expect(JSON.stringify(unknown.body)).toContain('req-9');
  });
  it('maps database refusals of a value (SQLSTATE class 22) to a 400 that does not echo the value', () => {
    const nul = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), {
      code: '22021',
    });
    expect(toWireError('workflow', nul, 'r')).toMatchObject({
      status: 400,
      body: { faultcode: 'Client', faultstring: DATA_EXCEPTION_MESSAGE },
    });
    const wrapped = Object.assign(new Error('invalid input syntax for type uuid: "secret-value"'), {
      driverError: { code: '22P02' },
    });
    const wire = toWireError('block-storage', wrapped, 'r');
    expect(wire.body).toEqual({ badRequest: { code: 400, message: DATA_EXCEPTION_MESSAGE } });
    // other database errors stay 500s
    expect(
      toWireError('block-storage', Object.assign(new Error('deadlock'), { code: '40P01' }), 'r').status,
    ).toBe(500);
  });
  it('maps framework errors', () => {
    expect(toWireError('block-storage', new NotFoundException(), 'r').body).toEqual({
      itemNotFound: { code: 404, message: 'The resource could not be found.' },
    });
    const invalidJson = Object.assign(new Error('Unexpected token'), {
      statusCode: 400,
      code: 'FST_ERR_CTP_INVALID_JSON_BODY',
    });
    expect(toWireError('block-storage', invalidJson, 'r').body).toEqual({
      badRequest: { code: 400, message: 'Malformed request body' },
    });
  });
});
