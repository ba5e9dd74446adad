// The line a Canon process started with bench/lib/no-page-cache.mjs prints on its first list read, for the harness to check (that module patches on import, so the harness cannot import it).
export const NO_PAGE_CACHE_MARKER = 'bench: no-page-cache: list reads bypass the page cache';
