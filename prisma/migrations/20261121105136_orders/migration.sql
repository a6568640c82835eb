-- CreateEnum
CREATE TYPE "order_status" AS ENUM ('queued', 'reserving', 'reserved', 'confirming', 'fulfilled', 'failed', 'needs_attention');

-- CreateEnum
CREATE TYPE "callback_status" AS ENUM ('pending', 'delivered', 'failed');

-- CreateTable
CREATE TABLE "orders" (
    "id" UUID NOT NULL,
    "api_key_id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "card_id" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "unit_price" TEXT NOT NULL,
    "total_amount" DECIMAL(20,6) NOT NULL,
    "reference" TEXT,
    "callback_url" TEXT,
    "transaction_number" BIGSERIAL NOT NULL,
    "transaction_id" TEXT,
    "payment_id" TEXT NOT NULL,
    "status" "order_status" NOT NULL DEFAULT 'queued',
    "status_detail" TEXT,
    "failure_code" TEXT,
    "failure_message" TEXT,
    "failure_upstream_code" INTEGER,
    "balance_checks" INTEGER NOT NULL DEFAULT 0,
    "initiate_attempts" INTEGER NOT NULL DEFAULT 0,
    "confirm_attempts" INTEGER NOT NULL DEFAULT 0,
    "version" INTEGER NOT NULL DEFAULT 0,
    "lease_owner" TEXT,
    "lease_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "fulfilled_at" TIMESTAMPTZ(3),

    CONSTRAINT "orders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "order_cards" (
    "order_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "key_id" TEXT NOT NULL,
    "nonce" BYTEA NOT NULL,
    "ciphertext" BYTEA NOT NULL,
    "card_number" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "order_cards_pkey" PRIMARY KEY ("order_id","position")
);

-- CreateTable
CREATE TABLE "order_events" (
    "id" BIGSERIAL NOT NULL,
    "order_id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "kind" TEXT NOT NULL,
    "from_status" TEXT,
    "to_status" TEXT,
    "endpoint" TEXT,
    "ok" BOOLEAN,
    "upstream_code" INTEGER,
    "duration_ms" INTEGER,
    "detail" JSONB,

    CONSTRAINT "order_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "callback_deliveries" (
    "id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "event" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "status" "callback_status" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "last_status" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),

    CONSTRAINT "callback_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "provider_state" (
    "name" TEXT NOT NULL,
    "active" BOOLEAN NOT NULL,
    "reason" TEXT,
    "until" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "provider_state_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE UNIQUE INDEX "orders_transaction_number_key" ON "orders"("transaction_number");

-- CreateIndex
CREATE UNIQUE INDEX "orders_transaction_id_key" ON "orders"("transaction_id");

-- CreateIndex
CREATE INDEX "orders_api_key_id_reference_idx" ON "orders"("api_key_id", "reference");

-- CreateIndex
CREATE INDEX "orders_status_updated_at_idx" ON "orders"("status", "updated_at");

-- CreateIndex
CREATE UNIQUE INDEX "orders_api_key_id_idempotency_key_key" ON "orders"("api_key_id", "idempotency_key");

-- CreateIndex
CREATE INDEX "order_cards_key_id_idx" ON "order_cards"("key_id");

-- CreateIndex
CREATE INDEX "order_events_order_id_id_idx" ON "order_events"("order_id", "id");

-- CreateIndex
CREATE INDEX "callback_deliveries_status_created_at_idx" ON "callback_deliveries"("status", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "callback_deliveries_order_id_event_key" ON "callback_deliveries"("order_id", "event");

-- AddForeignKey
ALTER TABLE "orders" ADD CONSTRAINT "orders_card_id_fkey" FOREIGN KEY ("card_id") REFERENCES "denominations"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_cards" ADD CONSTRAINT "order_cards_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_events" ADD CONSTRAINT "order_events_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "callback_deliveries" ADD CONSTRAINT "callback_deliveries_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
