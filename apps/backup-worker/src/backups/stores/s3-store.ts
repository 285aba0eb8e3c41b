import { createHash } from 'node:crypto';
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { BACKUP_DRIVER_IDS } from '@osc/block-storage-domain';
import { InvalidInputError } from '@osc/errors';
import { BackupStoreError, type BackupStore } from './backup-store';

/** The S3 driver's settings (Cinder's `backup_s3_*` options, upper-cased). */
export interface S3StoreConfig {
  readonly driver: 's3';
  /** Endpoint of an S3-compatible server (BACKUP_S3_ENDPOINT_URL); null = AWS itself. */
  readonly endpointUrl: string | null;
  readonly accessKey: string;
  readonly secretKey: string;
  /** Default container: the bucket (BACKUP_S3_STORE_BUCKET). */
  readonly bucket: string;
  readonly region: string;
  /** Objects larger than this go up as a multipart upload of parts this large. */
  readonly partSize: number;
  readonly timeoutMs: number;
  readonly retryMaxAttempts: number;
  /** Send each single-request upload's Content-MD5 (BACKUP_S3_MD5_VALIDATION). */
  readonly md5Validation: boolean;
}

/** S3's bucket naming rules (3–63 lower-case letters, digits, dots and dashes; not an IP address). */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const BATCH = 1000;

/**
 * The S3 driver (cinder.backup.drivers.s3): each backup container is a bucket (default
 * BACKUP_S3_STORE_BUCKET), created when missing; objects are named as Cinder names them (BS-11.3).
 * An object larger than the part size goes up as a multipart upload (AWS SDK v3 lib-storage, one
 * part in flight, so memory stays the chunk the engine already holds); a failed multipart upload
 * is aborted. Path-style addressing, so any S3-compatible server works by its endpoint URL.
 */
export class S3BackupStore implements BackupStore {
  readonly kind = 'object-store' as const;
  readonly driverId = BACKUP_DRIVER_IDS.s3;
  private readonly client: S3Client;
  private readonly where: string;

  constructor(private readonly config: S3StoreConfig) {
    this.where = config.endpointUrl ?? `S3 (${config.region})`;
    this.client = new S3Client({
      ...(config.endpointUrl === null ? {} : { endpoint: config.endpointUrl }),
      region: config.region,
      forcePathStyle: true,
      credentials: { accessKeyId: config.accessKey, secretAccessKey: config.secretKey },
      maxAttempts: config.retryMaxAttempts,
      // S3-compatible servers do not all know the newer flexible checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { requestTimeout: config.timeoutMs, connectionTimeout: config.timeoutMs },
    });
  }

  defaultContainer(): string {
    return this.config.bucket;
  }

  checkContainer(container: string): void {
    if (!BUCKET.test(container) || container.includes('..') || /^\d+\.\d+\.\d+\.\d+$/.test(container))
      throw new InvalidInputError(
        `Invalid backup: container ${container.slice(0, 100)} is not an S3 bucket name (3 to 63 lower-case letters, digits, dots and dashes).`,
      );
  }

  async ensureContainer(container: string): Promise<void> {
    this.checkContainer(container);
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: container }));
      return;
    } catch (err) {
      if (!(err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404))
        throw this.failure('check bucket', container, err);
    }
    try {
      await this.client.send(new CreateBucketCommand({ Bucket: container }));
    } catch (err) {
      // Created meanwhile by another job: fine.
      if (
        err instanceof S3ServiceException &&
        (err.name === 'BucketAlreadyOwnedByYou' || err.name === 'BucketAlreadyExists')
      )
        return;
      throw this.failure('create bucket', container, err);
    }
  }

  async write(container: string, name: string, data: Buffer): Promise<void> {
    try {
      if (data.length <= this.config.partSize) {
        await this.client.send(
          new PutObjectCommand({
            Bucket: container,
            Key: name,
            Body: data,
            ContentLength: data.length,
            ...(this.config.md5Validation
              ? { ContentMD5: createHash('md5').update(data).digest('base64') }
              : {}),
          }),
        );
        return;
      }
      await new Upload({
        client: this.client,
        params: { Bucket: container, Key: name, Body: data },
        partSize: this.config.partSize,
        queueSize: 1,
        leavePartsOnError: false,
      }).done();
    } catch (err) {
      throw this.failure('write', `${container}/${name}`, err);
    }
  }

  async read(container: string, name: string): Promise<Buffer> {
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: container, Key: name }));
      if (!res.Body) throw new BackupStoreError(`S3 GET ${container}/${name} returned no body`);
      return Buffer.from(await res.Body.transformToByteArray());
    } catch (err) {
      throw this.failure('read', `${container}/${name}`, err);
    }
  }

  async list(container: string, prefix: string): Promise<string[]> {
    const out: string[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.client.send(
          new ListObjectsV2Command({
            Bucket: container,
            Prefix: prefix,
            ContinuationToken: token,
            MaxKeys: BATCH,
          }),
        );
        for (const o of page.Contents ?? []) if (o.Key !== undefined) out.push(o.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token !== undefined);
    } catch (err) {
      if (
        err instanceof S3ServiceException &&
        (err.name === 'NoSuchBucket' || err.$metadata.httpStatusCode === 404)
      )
        return [];
      throw this.failure('list', container, err);
    }
    return out.sort();
  }

  async deletePrefix(container: string, prefix: string): Promise<void> {
    const names = await this.list(container, prefix);
    for (let i = 0; i < names.length; i += BATCH) {
      const batch = names.slice(i, i + BATCH);
      let errors: { Key?: string; Message?: string }[];
      try {
        const res = await this.client.send(
          new DeleteObjectsCommand({
            Bucket: container,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
        );
        errors = res.Errors ?? [];
      } catch (err) {
        throw this.failure('delete objects in', container, err);
      }
      if (errors.length > 0)
        throw new BackupStoreError(
          `S3 at ${this.where} could not delete ${errors.length} objects of ${container}, e.g. ${errors[0]?.Key ?? '?'}: ${errors[0]?.Message ?? ''}`,
        );
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  /** A message naming the server, the operation and its cause. */
  private failure(op: string, what: string, err: unknown): Error {
    if (err instanceof BackupStoreError || err instanceof InvalidInputError) return err;
    if (err instanceof S3ServiceException) {
      const status = err.$metadata.httpStatusCode ?? null;
      const reason =
        err.name === 'NoSuchKey'
          ? 'not found'
          : `${status ?? ''} ${err.name}${err.message && err.message !== err.name ? `: ${err.message}` : ''}`.trim();
      return new BackupStoreError(
        `S3 at ${this.where} could not ${op} ${what}: ${reason}`.slice(0, 900),
        status,
      );
    }
    const e = err as { code?: string; message?: string; cause?: { code?: string } };
    return new BackupStoreError(
      `Could not reach S3 at ${this.where} to ${op} ${what}: ${e.code ?? e.cause?.code ?? e.message ?? String(err)}`.slice(
        0,
        900,
      ),
    );
  }
}
