/** CLI output: results on stdout (machine-readable where asked), progress and problems on stderr. */
export const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};
export const err = (line = ''): void => {
  process.stderr.write(`${line}\n`);
};
