// The shape of a UUID (RFC 9562 text form), in either case: ids in paths, filters and batch reads are checked against it before any store sees them.

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
