import { Module } from '@nestjs/common';
import { ConsoleController } from './console.controller';

/** `/console`: the operator console's files and settings (needs {@link ConsoleSettingsModule}). */
@Module({ controllers: [ConsoleController] })
export class ConsoleModule {}
