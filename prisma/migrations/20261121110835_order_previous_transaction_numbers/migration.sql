-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "previous_transaction_numbers" BIGINT[] DEFAULT ARRAY[]::BIGINT[];
