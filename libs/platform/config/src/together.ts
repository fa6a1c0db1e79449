/**
 * Settings that only make sense together (a certificate, its key and a CA): `values` maps each
 * environment variable's name to its value ('' when unset). The problem to report when some but
 * not all are set, else undefined.
 */
export function goTogether(values: Readonly<Record<string, string>>): string | undefined {
  const names = Object.keys(values);
  const setCount = names.filter((name) => values[name] !== '').length;
  if (setCount === 0 || setCount === names.length) return undefined;
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} go together`;
}
