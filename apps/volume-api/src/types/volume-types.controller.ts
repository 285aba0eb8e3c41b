import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { Api, routes, type ApiRequest } from '../http/api-request';
import { DefaultTypesService } from './default-types.service';
import { VolumeTypeAccessService } from './volume-type-access.service';
import { VolumeTypeEncryptionService } from './volume-type-encryption.service';
import { VolumeTypeSpecsService } from './volume-type-specs.service';
import { VolumeTypesService } from './volume-types.service';

/** `/types`, extra specs, encryption and access (spec 7.2–7.5). */
@Controller(routes('types'))
export class VolumeTypesController {
  constructor(
    private readonly types: VolumeTypesService,
    private readonly specs: VolumeTypeSpecsService,
    private readonly encryption: VolumeTypeEncryptionService,
    private readonly typeAccess: VolumeTypeAccessService,
  ) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.types.list(api);
  }

  @Post()
  @HttpCode(200)
  create(@Api() api: ApiRequest, @Body() body: unknown) {
    return this.types.create(api, body);
  }

  @Get(':id')
  show(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.types.show(api, id);
  }

  @Put(':id')
  update(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.types.update(api, id, body);
  }

  @Delete(':id')
  @HttpCode(202)
  async remove(@Api() api: ApiRequest, @Param('id') id: string): Promise<void> {
    await this.types.remove(api, id);
  }

  @Post(':id/action')
  @HttpCode(202)
  async action(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.typeAccess.accessAction(api, id, body);
  }

  @Get(':id/os-volume-type-access')
  access(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.typeAccess.listAccess(api, id);
  }

  @Get(':id/extra_specs')
  listSpecs(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.specs.listSpecs(api, id);
  }

  @Post(':id/extra_specs')
  @HttpCode(200)
  setSpecs(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.specs.setSpecs(api, id, body);
  }

  @Get(':id/extra_specs/:key')
  showSpec(@Api() api: ApiRequest, @Param('id') id: string, @Param('key') key: string) {
    return this.specs.showSpec(api, id, key);
  }

  @Put(':id/extra_specs/:key')
  updateSpec(
    @Api() api: ApiRequest,
    @Param('id') id: string,
    @Param('key') key: string,
    @Body() body: unknown,
  ) {
    return this.specs.updateSpec(api, id, key, body);
  }

  @Delete(':id/extra_specs/:key')
  @HttpCode(202)
  async deleteSpec(
    @Api() api: ApiRequest,
    @Param('id') id: string,
    @Param('key') key: string,
  ): Promise<void> {
    await this.specs.deleteSpec(api, id, key);
  }

  @Get(':id/encryption')
  showEncryption(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.encryption.showEncryption(api, id);
  }

  @Post(':id/encryption')
  @HttpCode(200)
  createEncryption(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.encryption.createEncryption(api, id, body);
  }

  @Get(':id/encryption/:key')
  showEncryptionSpec(@Api() api: ApiRequest, @Param('id') id: string, @Param('key') key: string) {
    return this.encryption.showEncryptionSpec(api, id, key);
  }

  @Put(':id/encryption/:encryptionId')
  updateEncryption(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.encryption.updateEncryption(api, id, body);
  }

  @Delete(':id/encryption/:encryptionId')
  @HttpCode(202)
  async deleteEncryption(@Api() api: ApiRequest, @Param('id') id: string): Promise<void> {
    await this.encryption.deleteEncryption(api, id);
  }
}

/** `/default-types` (3.62+, spec 7.6); both URL forms route, no v2. */
@Controller(routes('default-types', { v2: false }))
export class DefaultTypesController {
  constructor(private readonly defaults: DefaultTypesService) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.defaults.listDefaults(api);
  }

  @Put(':projectId')
  set(@Api() api: ApiRequest, @Param('projectId') projectId: string, @Body() body: unknown) {
    return this.defaults.setDefault(api, projectId, body);
  }

  @Get(':projectId')
  show(@Api() api: ApiRequest, @Param('projectId') projectId: string) {
    return this.defaults.getDefault(api, projectId);
  }

  @Delete(':projectId')
  @HttpCode(204)
  async unset(@Api() api: ApiRequest, @Param('projectId') projectId: string): Promise<void> {
    await this.defaults.unsetDefault(api, projectId);
  }
}
