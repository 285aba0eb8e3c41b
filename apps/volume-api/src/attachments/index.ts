import { AttachActionsService } from './attach-actions.service';
import { AttachmentsController } from './attachments.controller';
import { AttachmentsService } from './attachments.service';

export { AttachActionsService, AttachmentsService };
export const attachmentControllers = [AttachmentsController];
export const attachmentProviders = [AttachmentsService, AttachActionsService];
