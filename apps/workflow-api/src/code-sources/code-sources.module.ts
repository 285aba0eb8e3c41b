import { Module } from '@nestjs/common';
import { CodeSourcesController } from './code-sources.controller';
import { CodeSourcesService } from './code-sources.service';

/** `/v2/code_sources`: the JavaScript modules dynamic actions take their classes from. */
@Module({
  controllers: [CodeSourcesController],
  providers: [CodeSourcesService],
  exports: [CodeSourcesService],
})
export class CodeSourcesModule {}
