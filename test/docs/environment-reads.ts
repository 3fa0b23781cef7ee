import ts from 'typescript';

// Finds the environment variables a source file reads, by its syntax tree: `process.env.X`,
// `env.X`, `env['X']` and `'X' in env` where `env` is a NodeJS.ProcessEnv (a parameter so typed, or
// a const taken from process.env), and the name given to a reader beside the environment,
// `intFromEnv(env, 'X', …)`, `read(env, 'X')`. A name held in a const array the code maps over
// (`MINIO_REQUIRED.map((name) => env[name])`) counts too. Writes are not reads, and a name computed
// at run time (the CLI's `--secret K` reads variable K) is no setting, so neither is collected.

export interface EnvironmentRead {
  readonly name: string;
  /** `file:line`, for messages. */
  readonly where: string;
  /** The fallback of an integer reader, when it is a constant this file spells out. */
  readonly intFallback?: number;
}

/** Readers whose third argument is the integer used when the variable is unset. */
const INT_READERS = new Set(['intFromEnv', 'parseInteger']);
const VARIABLE_NAME = /^[A-Z][A-Z0-9_]*$/;

export function environmentReads(path: string, text: string): EnvironmentRead[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const reads: EnvironmentRead[] = [];
  const add = (name: string, node: ts.Node, intFallback?: number) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
    reads.push({ name, where: `${path}:${line}`, ...(intFallback === undefined ? {} : { intFallback }) });
  };
  const visit = (node: ts.Node) => {
    if (ts.isPropertyAccessExpression(node) && isEnvironment(node.expression) && !isWritten(node)) add(node.name.text, node);
    if (ts.isElementAccessExpression(node) && isEnvironment(node.expression) && !isWritten(node)) {
      for (const name of namesOf(node.argumentExpression)) add(name, node);
    }
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.InKeyword && isEnvironment(node.right)) {
      for (const name of namesOf(node.left)) add(name, node);
    }
    if (ts.isCallExpression(node)) {
      const args = node.arguments;
      const at = args.findIndex((arg, i) => isEnvironment(arg) && i + 1 < args.length && ts.isStringLiteral(args[i + 1]));
      const name = at < 0 ? undefined : (args[at + 1] as ts.StringLiteral).text;
      if (name !== undefined && VARIABLE_NAME.test(name)) {
        const isIntReader = ts.isIdentifier(node.expression) && INT_READERS.has(node.expression.text);
        add(name, node, isIntReader && args[at + 2] ? constantNumber(args[at + 2]) : undefined);
      }
    }
    node.forEachChild(visit);
  };
  visit(source);
  return reads;
}

function isWritten(node: ts.Expression): boolean {
  const { parent } = node;
  return ts.isBinaryExpression(parent) && parent.left === node && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken;
}

/** `process.env`, or an identifier bound to it. */
function isEnvironment(node: ts.Node): boolean {
  if (ts.isPropertyAccessExpression(node))
    return ts.isIdentifier(node.expression) && node.expression.text === 'process' && node.name.text === 'env';
  if (!ts.isIdentifier(node)) return false;
  const binding = bindingOf(node);
  if (binding === undefined) return false;
  if (ts.isParameter(binding)) return binding.type !== undefined && /\bProcessEnv\b/.test(binding.type.getText());
  return binding.initializer !== undefined && /\bprocess\.env\b/.test(binding.initializer.getText());
}

/** The parameter or variable declaration an identifier refers to, looked up scope by scope. */
function bindingOf(identifier: ts.Identifier): ts.ParameterDeclaration | ts.VariableDeclaration | undefined {
  const named = (declaration: ts.ParameterDeclaration | ts.VariableDeclaration) =>
    ts.isIdentifier(declaration.name) && declaration.name.text === identifier.text;
  for (let scope: ts.Node | undefined = identifier.parent; scope; scope = scope.parent) {
    if (ts.isFunctionLike(scope)) {
      const parameter = scope.parameters.find(named);
      if (parameter) return parameter;
    }
    if (ts.isForOfStatement(scope) && ts.isVariableDeclarationList(scope.initializer)) {
      const variable = scope.initializer.declarations.find(named);
      if (variable) return variable;
    }
    if (ts.isBlock(scope) || ts.isSourceFile(scope)) {
      for (const statement of scope.statements) {
        if (!ts.isVariableStatement(statement)) continue;
        const variable = statement.declarationList.declarations.find(named);
        if (variable) return variable;
      }
    }
  }
  return undefined;
}

/** The variable names an expression stands for: a literal, or a name bound to a constant list. */
function namesOf(node: ts.Expression): string[] {
  if (ts.isStringLiteral(node)) return [node.text];
  if (!ts.isIdentifier(node)) return [];
  const binding = bindingOf(node);
  if (binding === undefined) return [];
  // `for (const name of LIST)`
  if (ts.isVariableDeclaration(binding) && ts.isForOfStatement(binding.parent.parent)) return stringsOf(binding.parent.parent.expression);
  if (ts.isVariableDeclaration(binding)) return binding.initializer ? stringsOf(binding.initializer) : [];
  // `LIST.map((name) => …)`, `LIST.filter(…)`: the callback's parameter takes each entry.
  const callback = binding.parent;
  const call = callback.parent;
  if (ts.isCallExpression(call) && ts.isPropertyAccessExpression(call.expression) && call.arguments[0] === callback) {
    return stringsOf(call.expression.expression);
  }
  return [];
}

/** The strings of a literal, a constant list, or an identifier bound to either. */
function stringsOf(node: ts.Expression): string[] {
  const value = withoutAssertion(node);
  if (ts.isStringLiteral(value)) return [value.text];
  if (ts.isArrayLiteralExpression(value)) return value.elements.flatMap((element) => (ts.isStringLiteral(element) ? [element.text] : []));
  if (!ts.isIdentifier(value)) return [];
  const binding = bindingOf(value);
  return binding && ts.isVariableDeclaration(binding) && binding.initializer ? stringsOf(binding.initializer) : [];
}

function withoutAssertion(node: ts.Expression): ts.Expression {
  let value = node;
  while (ts.isAsExpression(value) || ts.isParenthesizedExpression(value) || ts.isSatisfiesExpression(value)) value = value.expression;
  return value;
}

const ARITHMETIC: Partial<Record<ts.SyntaxKind, (a: number, b: number) => number>> = {
  [ts.SyntaxKind.PlusToken]: (a, b) => a + b,
  [ts.SyntaxKind.MinusToken]: (a, b) => a - b,
  [ts.SyntaxKind.AsteriskToken]: (a, b) => a * b,
  [ts.SyntaxKind.SlashToken]: (a, b) => a / b,
  [ts.SyntaxKind.AsteriskAsteriskToken]: (a, b) => a ** b,
};

/**
 * The value of a numeric constant written in this file: `120_000`, `2048 * MiB`, `24 * 60 * 60 * 1000`,
 * `DEFAULTS.timeoutMs`; undefined for anything else (an import, a call).
 */
export function constantNumber(node: ts.Expression): number | undefined {
  const value = withoutAssertion(node);
  if (ts.isNumericLiteral(value)) return Number(value.text.replace(/_/g, ''));
  if (ts.isBinaryExpression(value)) {
    const operate = ARITHMETIC[value.operatorToken.kind];
    const [left, right] = [constantNumber(value.left), constantNumber(value.right)];
    return operate && left !== undefined && right !== undefined ? operate(left, right) : undefined;
  }
  if (ts.isIdentifier(value)) {
    const binding = bindingOf(value);
    return binding && ts.isVariableDeclaration(binding) && binding.initializer ? constantNumber(binding.initializer) : undefined;
  }
  if (ts.isPropertyAccessExpression(value) && ts.isIdentifier(value.expression)) {
    const binding = bindingOf(value.expression);
    const object = binding && ts.isVariableDeclaration(binding) && binding.initializer ? withoutAssertion(binding.initializer) : undefined;
    if (object === undefined || !ts.isObjectLiteralExpression(object)) return undefined;
    const property = object.properties.find(
      (p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === value.name.text,
    );
    return property ? constantNumber(property.initializer) : undefined;
  }
  return undefined;
}
