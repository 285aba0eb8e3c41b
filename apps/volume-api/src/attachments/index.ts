import { AttachmentsController } from './attachments.controller';
import { AttachmentsService } from './attachments.service';

export { AttachmentsService };
export const attachmentControllers = [AttachmentsController];
export const attachmentProviders = [AttachmentsService];
