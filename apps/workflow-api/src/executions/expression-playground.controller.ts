import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { InvalidInputError } from '@osc/errors';
import { Ctx, type RequestContext } from '@osc/http-common';
import { Authorize } from '../policy/authorize';
import { ExpressionPlaygroundService } from './expression-playground.service';

/**
 * `POST /v2/executions/{id}/evaluate`, the expression playground (our extension of the Mistral API,
 * docs/workflow-events.md): `{"expression", "language"?, "task_execution_id"?}` →
 * `{"result": …}` or `{"error": {message, language, expression, position}}`, both 200.
 */
@Controller('v2/executions')
export class ExpressionPlaygroundController {
  constructor(private readonly playground: ExpressionPlaygroundService) {}

  @Post(':id/evaluate')
  @Authorize('executions:evaluate')
  @HttpCode(200)
  evaluate(@Ctx() ctx: RequestContext, @Param('id') id: string, @Body() body: unknown) {
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw new InvalidInputError('The request body must be a JSON object.');
    return this.playground.evaluate(ctx, id, body as Record<string, unknown>);
  }
}
