// Name casing between the model's snake_case and kebab-case names and the camelCase and PascalCase names of other front ends (GraphQL, clients).

/** `full_name` → `fullName`, `order-items` → `orderItems`, `rotate-secret` → `rotateSecret`; already camelCase stays so. */
export function camelCase(name: string): string {
  return name.replace(/[-_]+([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** `order_item` → `OrderItem`, `oauth_client` → `OauthClient`. */
export function pascalCase(name: string): string {
  const camel = camelCase(name);
  return camel.charAt(0).toUpperCase() + camel.slice(1);
}

/** `fullName` → `full_name`, `certificateSha256` → `certificate_sha256`; snake_case stays so. */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
