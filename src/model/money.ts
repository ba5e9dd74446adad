// The bound on money amounts: every amount, and every total computed from amounts, is an integer of minor units up to MAX_AMOUNT.

/**
 * 10^15 − 1 minor units (just under ten trillion euros in cents). Chosen so that a total and one more line
 * of up to MAX_AMOUNT still sum below 2^53 (exact in JavaScript) and far below 2^63 (SQLite's INTEGER,
 * PostgreSQL's BIGINT): the check that refuses an overflowing total can never itself overflow.
 */
export const MAX_AMOUNT = 999_999_999_999_999;
