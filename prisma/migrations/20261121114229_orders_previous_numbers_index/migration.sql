-- CreateIndex
CREATE INDEX "orders_previous_transaction_numbers_idx" ON "orders" USING GIN ("previous_transaction_numbers");
