import { Module } from '@nestjs/common';
import { WorkbooksController } from './workbooks.controller';
import { WorkbooksService } from './workbooks.service';

@Module({ controllers: [WorkbooksController], providers: [WorkbooksService] })
export class WorkbooksModule {}
