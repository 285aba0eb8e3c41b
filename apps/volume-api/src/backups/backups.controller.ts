import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Put } from '@nestjs/common';
import { BACKUP_PROGRESS_HEADER, wantsBackupProgress } from '@osc/block-storage-domain';
import { Api, routes, type ApiRequest } from '../http/api-request';
import { BackupCreateService } from './backup-create.service';
import { BackupRecordsService } from './backup-records.service';
import { BackupRestoreService } from './backup-restore.service';
import { BackupsService } from './backups.service';

/** `/backups` (spec 7.9). Static segments are declared before `:id` so they win the route match. */
@Controller(routes('backups'))
export class BackupsController {
  constructor(
    private readonly backups: BackupsService,
    private readonly creation: BackupCreateService,
    private readonly restores: BackupRestoreService,
    private readonly records: BackupRecordsService,
  ) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.backups.list(api, false);
  }

  @Get('detail')
  detail(@Api() api: ApiRequest, @Headers(BACKUP_PROGRESS_HEADER) progress?: string) {
    return this.backups.list(api, true, { progress: wantsBackupProgress(progress) });
  }

  @Post()
  @HttpCode(202)
  create(@Api() api: ApiRequest, @Body() body: unknown) {
    return this.creation.create(api, body);
  }

  @Post('import_record')
  @HttpCode(201)
  importRecord(@Api() api: ApiRequest, @Body() body: unknown) {
    return this.records.importRecord(api, body);
  }

  @Get(':id')
  show(@Api() api: ApiRequest, @Param('id') id: string, @Headers(BACKUP_PROGRESS_HEADER) progress?: string) {
    return this.backups.show(api, id, { progress: wantsBackupProgress(progress) });
  }

  @Put(':id')
  update(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.backups.update(api, id, body);
  }

  @Delete(':id')
  @HttpCode(202)
  async remove(@Api() api: ApiRequest, @Param('id') id: string): Promise<void> {
    await this.backups.remove(api, id, false);
  }

  @Post(':id/restore')
  @HttpCode(202)
  restore(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.restores.restore(api, id, body);
  }

  @Get(':id/export_record')
  exportRecord(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.records.exportRecord(api, id);
  }

  @Post(':id/action')
  @HttpCode(202)
  async action(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.backups.action(api, id, body);
  }
}
