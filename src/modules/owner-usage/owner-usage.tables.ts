/** The owner usage module's table. Discord IDs are TEXT of decimal digits; days are YYYY-MM-DD (UTC). */
export type OwnerUsageTables = {
  owner_usage: OwnerUsageTable;
};

export type OwnerUsageTable = {
  owner: string;
  day: string;
  requests: number;
  upstream: number;
  refused: number;
};
