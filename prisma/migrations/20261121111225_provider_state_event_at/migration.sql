-- AlterTable
ALTER TABLE "provider_state" ADD COLUMN     "event_at" TIMESTAMPTZ(3);
