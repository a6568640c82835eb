-- CreateEnum
CREATE TYPE "sync_outcome" AS ENUM ('running', 'succeeded', 'partial', 'failed');

-- CreateTable
CREATE TABLE "vendors" (
    "id" TEXT NOT NULL,
    "name_en" TEXT NOT NULL,
    "name_ar" TEXT NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "vendors_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "denominations" (
    "id" TEXT NOT NULL,
    "vendor_id" TEXT NOT NULL,
    "name_en" TEXT NOT NULL,
    "name_ar" TEXT NOT NULL,
    "unit_price" TEXT NOT NULL,
    "unit_price_value" DECIMAL(20,6) NOT NULL,
    "stock" INTEGER NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "denominations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "price_changes" (
    "id" BIGSERIAL NOT NULL,
    "denomination_id" TEXT NOT NULL,
    "old_price" TEXT NOT NULL,
    "new_price" TEXT NOT NULL,
    "sync_run_id" UUID NOT NULL,
    "changed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "price_changes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "catalog_sync_runs" (
    "id" UUID NOT NULL,
    "trigger" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),
    "outcome" "sync_outcome" NOT NULL DEFAULT 'running',
    "vendors_seen" INTEGER NOT NULL DEFAULT 0,
    "denominations_seen" INTEGER NOT NULL DEFAULT 0,
    "vendors_deactivated" INTEGER NOT NULL DEFAULT 0,
    "denominations_deactivated" INTEGER NOT NULL DEFAULT 0,
    "price_changes" INTEGER NOT NULL DEFAULT 0,
    "errors" JSONB NOT NULL DEFAULT '[]',

    CONSTRAINT "catalog_sync_runs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "denominations_vendor_id_idx" ON "denominations"("vendor_id");

-- CreateIndex
CREATE INDEX "price_changes_denomination_id_changed_at_idx" ON "price_changes"("denomination_id", "changed_at");

-- CreateIndex
CREATE INDEX "catalog_sync_runs_started_at_idx" ON "catalog_sync_runs"("started_at");

-- AddForeignKey
ALTER TABLE "denominations" ADD CONSTRAINT "denominations_vendor_id_fkey" FOREIGN KEY ("vendor_id") REFERENCES "vendors"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "price_changes" ADD CONSTRAINT "price_changes_denomination_id_fkey" FOREIGN KEY ("denomination_id") REFERENCES "denominations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
