import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { InvalidInputError } from '@osc/errors';
import { isJsonObject, parseBoolean } from '@osc/block-storage-domain';
import { Api, routes, type ApiRequest } from '../http/api-request';
import { VolumeCreateService } from '../volumes/volume-create.service';
import { GroupActionsService } from './group-actions.service';
import { GroupFromSourceService } from './group-from-source.service';
import { GroupLookupService } from './group-lookup.service';
import { GroupMembershipService } from './group-membership.service';
import { GroupSnapshotsService } from './group-snapshots.service';
import { GroupTypesService } from './group-types.service';
import { GroupsService } from './groups.service';

/** `/group_types` (3.11+). */
@Controller(routes('group_types', { v2: false }))
export class GroupTypesController {
  constructor(private readonly types: GroupTypesService) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.types.list(api);
  }

  @Post()
  @HttpCode(202)
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

  @Get(':id/group_specs')
  specs(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.types.listSpecs(api, id);
  }

  @Post(':id/group_specs')
  @HttpCode(202)
  setSpecs(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown) {
    return this.types.setSpecs(api, id, body);
  }

  @Get(':id/group_specs/:key')
  showSpec(@Api() api: ApiRequest, @Param('id') id: string, @Param('key') key: string) {
    return this.types.showSpec(api, id, key);
  }

  @Put(':id/group_specs/:key')
  updateSpec(
    @Api() api: ApiRequest,
    @Param('id') id: string,
    @Param('key') key: string,
    @Body() body: unknown,
  ) {
    return this.types.updateSpec(api, id, key, body);
  }

  @Delete(':id/group_specs/:key')
  @HttpCode(202)
  async deleteSpec(
    @Api() api: ApiRequest,
    @Param('id') id: string,
    @Param('key') key: string,
  ): Promise<void> {
    await this.types.deleteSpec(api, id, key);
  }
}

/** `/groups` (3.13+; create-from-src 3.14). */
@Controller(routes('groups', { v2: false }))
export class GroupsController {
  constructor(
    private readonly lookup: GroupLookupService,
    private readonly groups: GroupsService,
    private readonly membership: GroupMembershipService,
    private readonly actions: GroupActionsService,
    private readonly fromSource: GroupFromSourceService,
    private readonly volumes: VolumeCreateService,
  ) {}

  @Get()
  list(@Api() api: ApiRequest) {
    this.lookup.gate(api, 'groups.api');
    return this.groups.list(api, 'group', false);
  }

  @Get('detail')
  detail(@Api() api: ApiRequest) {
    this.lookup.gate(api, 'groups.api');
    return this.groups.list(api, 'group', true);
  }

  @Post()
  @HttpCode(202)
  create(@Api() api: ApiRequest, @Body() body: unknown) {
    this.lookup.gate(api, 'groups.api');
    return this.groups.create(api, 'group', body);
  }

  @Post('action')
  @HttpCode(202)
  createFromSource(@Api() api: ApiRequest, @Body() body: unknown) {
    this.lookup.gate(api, 'group-snapshots.api');
    if (!isJsonObject(body) || !('create-from-src' in body))
      throw new InvalidInputError("Invalid input received: 'create-from-src' is the only action on /groups.");
    return this.fromSource.createFromSource(api, 'group', body, (a, b, member) =>
      this.volumes.create(a, b, member),
    );
  }

  @Get(':id')
  show(@Api() api: ApiRequest, @Param('id') id: string) {
    this.lookup.gate(api, 'groups.api');
    return this.groups.show(api, 'group', id);
  }

  @Put(':id')
  @HttpCode(202)
  async update(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    this.lookup.gate(api, 'groups.api');
    await this.membership.update(api, 'group', id, body);
  }

  @Post(':id/action')
  @HttpCode(202)
  async action(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    this.lookup.gate(api, 'groups.api');
    await this.actions.action(api, id, body);
  }
}

/** `/group_snapshots` (3.14+). */
@Controller(routes('group_snapshots', { v2: false }))
export class GroupSnapshotsController {
  constructor(
    private readonly lookup: GroupLookupService,
    private readonly snapshots: GroupSnapshotsService,
  ) {}

  @Get()
  list(@Api() api: ApiRequest) {
    this.lookup.gate(api, 'group-snapshots.api');
    return this.snapshots.list(api, 'group', false);
  }

  @Get('detail')
  detail(@Api() api: ApiRequest) {
    this.lookup.gate(api, 'group-snapshots.api');
    return this.snapshots.list(api, 'group', true);
  }

  @Post()
  @HttpCode(202)
  create(@Api() api: ApiRequest, @Body() body: unknown) {
    this.lookup.gate(api, 'group-snapshots.api');
    return this.snapshots.create(api, 'group', body);
  }

  @Get(':id')
  show(@Api() api: ApiRequest, @Param('id') id: string) {
    this.lookup.gate(api, 'group-snapshots.api');
    return this.snapshots.show(api, 'group', id);
  }

  @Delete(':id')
  @HttpCode(202)
  async remove(@Api() api: ApiRequest, @Param('id') id: string): Promise<void> {
    this.lookup.gate(api, 'group-snapshots.api');
    await this.snapshots.remove(api, 'group', id);
  }

  @Post(':id/action')
  @HttpCode(202)
  async action(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    this.lookup.gate(api, 'group-snapshots.api');
    await this.snapshots.action(api, id, body);
  }
}

/** `/consistencygroups` (v2 and v3, deprecated aliases of groups, BS-7.11). */
@Controller(routes('consistencygroups'))
export class ConsistencyGroupsController {
  constructor(
    private readonly groups: GroupsService,
    private readonly membership: GroupMembershipService,
    private readonly fromSource: GroupFromSourceService,
    private readonly volumes: VolumeCreateService,
  ) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.groups.list(api, 'cg', false);
  }

  @Get('detail')
  detail(@Api() api: ApiRequest) {
    return this.groups.list(api, 'cg', true);
  }

  @Post()
  @HttpCode(202)
  create(@Api() api: ApiRequest, @Body() body: unknown) {
    return this.groups.create(api, 'cg', body);
  }

  @Post('create_from_src')
  @HttpCode(202)
  createFromSource(@Api() api: ApiRequest, @Body() body: unknown) {
    return this.fromSource.createFromSource(api, 'cg', body, (a, b, member) =>
      this.volumes.create(a, b, member),
    );
  }

  @Get(':id')
  show(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.groups.show(api, 'cg', id);
  }

  @Put(':id')
  @HttpCode(202)
  async update(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.membership.update(api, 'cg', id, body);
  }

  @Put(':id/update')
  @HttpCode(202)
  async updateAlias(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.membership.update(api, 'cg', id, body);
  }

  @Post(':id/delete')
  @HttpCode(202)
  async remove(@Api() api: ApiRequest, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    let force = false;
    if (body !== undefined && body !== null && body !== '') {
      if (!isJsonObject(body))
        throw new InvalidInputError('Invalid input received: the body must be an object.');
      const cg = body['consistencygroup'];
      if (cg !== undefined && cg !== null) {
        if (!isJsonObject(cg))
          throw new InvalidInputError("Invalid input received: 'consistencygroup' must be an object.");
        if (cg['force'] !== undefined) force = parseBoolean(cg['force'], 'force');
      }
    }
    await this.groups.remove(api, 'cg', id, force);
  }
}

/** `/cgsnapshots` (v2 and v3, BS-7.11.7). */
@Controller(routes('cgsnapshots'))
export class CgsnapshotsController {
  constructor(private readonly snapshots: GroupSnapshotsService) {}

  @Get()
  list(@Api() api: ApiRequest) {
    return this.snapshots.list(api, 'cg', false);
  }

  @Get('detail')
  detail(@Api() api: ApiRequest) {
    return this.snapshots.list(api, 'cg', true);
  }

  @Post()
  @HttpCode(202)
  create(@Api() api: ApiRequest, @Body() body: unknown) {
    return this.snapshots.create(api, 'cg', body);
  }

  @Get(':id')
  show(@Api() api: ApiRequest, @Param('id') id: string) {
    return this.snapshots.show(api, 'cg', id);
  }

  @Delete(':id')
  @HttpCode(202)
  async remove(@Api() api: ApiRequest, @Param('id') id: string): Promise<void> {
    await this.snapshots.remove(api, 'cg', id);
  }
}
