"""Formula text to `FormulaTree`: a hand-written recursive-descent parser.

DESIGN.md, "The spec": the parsed form of ``formula.text``.  No ``eval`` and no
Python ``ast``: the grammar is ours, small, and every error is a `FormulaError`
at the line and column of the offending token.

Grammar (lowest precedence first)::

    block      := (statement | comment)* ; one per line
    statement  := NAME ['(' NAME (',' NAME)* ')'] ('='|'+='|'-='|'*='|'/=') rhs [';'|'.']
    rhs        := piecewise | ifchain | expr
    piecewise  := expr [','] ('if' expr | 'otherwise')  { NEWLINE expr [','] ('if' expr | 'otherwise') }
    ifchain    := 'if' expr 'then' expr { NEWLINE 'if' expr 'then' expr } ['else' ['then'] expr]
    expr       := or ['?' expr ':' expr]
    binary     := || && | & (== !=) (< <= > >=) (<< >>) (+ -) (* / %)
    unary      := ('-' | '+' | '!' | '~') unary | power
    power      := primary ['^' unary]
    primary    := NUM | NAME | NAME '(' args ')' | '(' expr ')'
                | 'integrate' '(' NAME '=' expr 'to' expr ',' expr ')'
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from dmlconform.errors import FormulaError
from dmlconform.formula.lexer import KEYWORDS, Kind, Token, tokenize
from dmlconform.formula.tree import (
    Assign,
    Binary,
    Branch,
    Call,
    Comment,
    Conditional,
    Expr,
    FormulaTree,
    Integral,
    Name,
    Node,
    Num,
    Piecewise,
    Statement,
    Unary,
    Value,
    children,
)
from dmlconform.limits import MAX_FORMULA_DEPTH

#: Binary operators and their precedence (higher binds tighter); all left-associative
#: except ``^``, which `_power` handles.
BINARY_PRECEDENCE: dict[str, int] = {
    "||": 1, "&&": 2, "|": 3, "&": 4,
    "==": 5, "!=": 5, "<": 6, "<=": 6, ">": 6, ">=": 6,
    "<<": 7, ">>": 7, "+": 8, "-": 8, "*": 9, "/": 9, "%": 9,
}
UNARY_PRECEDENCE = 10
POWER_PRECEDENCE = 11
UNARY_OPS = ("-", "+", "!", "~")
ASSIGN_OPS = ("=", "+=", "-=", "*=", "/=")
INTEGRAL = "integrate"


def parse(text: str, *, origin: str = "<formula>", first_line: int = 1) -> FormulaTree:
    """Parse a formula block.  Raises `FormulaError` with the line (counted from
    ``first_line``) and column of the first token that does not fit, or of the
    statement that nests deeper than `limits.MAX_FORMULA_DEPTH`."""
    return _Parser(tokenize(text, origin=origin, first_line=first_line), origin).block()


def depth(node: Node) -> int:
    """How many nodes the longest path from ``node`` down to a leaf holds
    (``x`` 1, ``a + b`` 2, ``a + b + c`` 3); computed without recursion."""
    deepest = 0
    stack = [(node, 1)]
    while stack:
        current, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children(current))
    return deepest


def _too_deep(origin: str, token: Token) -> FormulaError:
    return FormulaError(f"nesting deeper than {MAX_FORMULA_DEPTH} levels (brackets, operators, calls and branches "
                        "inside one another); split the formula into named steps (M = ...)",
                        path=origin, line=token.line, column=token.column)


class _Parser:
    """Recursive descent.  ``depth`` counts the recursive constructs open at
    the current token (bracketed and nested expressions, right operands,
    unary operators, exponents), so that no input can recurse deeper than
    MAX_FORMULA_DEPTH of them, a few Python frames each; `statement` then
    checks the depth of the tree it built (a long ``a + b + c ...`` chain is
    built by a loop, not by recursion)."""

    def __init__(self, tokens: list[Token], origin: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.origin = origin
        self.depth = 0

    @contextmanager
    def nested(self) -> Iterator[None]:
        """One more level of recursion, refused past MAX_FORMULA_DEPTH."""
        if self.depth >= MAX_FORMULA_DEPTH:
            raise _too_deep(self.origin, self.tok)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    # -- token helpers -------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def peek(self, offset: int = 1) -> Token:
        return self.tokens[min(self.pos + offset, len(self.tokens) - 1)]

    def at(self, *texts: str) -> bool:
        t = self.tok
        return t.kind in (Kind.OP, Kind.NAME) and t.text in texts

    def take(self) -> Token:
        t = self.tok
        self.pos += 1
        return t

    def expect(self, text: str, what: str | None = None) -> Token:
        if not self.at(text):
            self.fail(f"expected {what or repr(text)}")
        return self.take()

    def fail(self, message: str, token: Token | None = None) -> None:
        t = token or self.tok
        found = t.kind.value if t.kind in (Kind.NEWLINE, Kind.END) else repr(t.text)
        raise FormulaError(f"{message}, found {found}", path=self.origin, line=t.line, column=t.column)

    def skip_newlines(self) -> None:
        while self.tok.kind is Kind.NEWLINE:
            self.take()

    def end_of_line(self) -> str | None:
        """Consume an optional ``;``/``.``, a trailing comment and the line end;
        return the comment text."""
        if self.at(";", "."):
            self.take()
        note = self.take().text if self.tok.kind is Kind.COMMENT else None
        if self.tok.kind is Kind.NEWLINE:
            self.take()
        elif self.tok.kind is not Kind.END:
            self.fail("expected the end of the line")
        return note

    # -- statements ----------------------------------------------------
    def block(self) -> FormulaTree:
        statements: list[Statement] = []
        self.skip_newlines()
        while self.tok.kind is not Kind.END:
            if self.tok.kind is Kind.COMMENT:
                statements.append(Comment(self.take().text))
                self.end_of_line()
            else:
                statements.append(self.statement())
            self.skip_newlines()
        if not any(isinstance(s, Assign) for s in statements):
            self.fail("expected a formula such as 'f(x) = ...'")
        return FormulaTree(tuple(statements))

    def at_statement_start(self) -> bool:
        """A line that starts ``NAME =`` / ``NAME op=`` / ``NAME(a, b) =``."""
        if self.tok.kind is not Kind.NAME or self.tok.text in KEYWORDS:
            return False
        i = 1
        if self.peek(1).text == "(":
            i = 2
            while self.peek(i).kind is Kind.NAME and self.peek(i + 1).text in (",", ")"):
                i += 2
                if self.peek(i - 1).text == ")":
                    break
            else:
                return False
        t = self.peek(i)
        return t.kind is Kind.OP and t.text in ASSIGN_OPS

    def statement(self) -> Assign:
        if not self.at_statement_start():
            self.fail("expected a statement such as 'f(x) = ...' or 'Name = ...'")
        start = self.tok
        target = self.take().text
        params: tuple[str, ...] | None = None
        if self.at("("):
            self.take()
            names = [self.take().text]
            while self.at(","):
                self.take()
                names.append(self.take().text)
            self.expect(")")
            params = tuple(names)
        op = self.take().text
        if op != "=" and params is not None:
            self.fail(f"a function definition takes '=', not {op!r}")
        value, note = self.rhs()
        if depth(value) > MAX_FORMULA_DEPTH:
            raise _too_deep(self.origin, start)
        return Assign(target, params, op, value, note)

    def rhs(self) -> tuple[Value, str | None]:
        if self.at("if"):
            return self.if_chain(), None
        first = self.expr()
        if self.at(",", "if", "otherwise"):
            return self.piecewise(first), None
        return first, self.end_of_line()

    def branch_tail(self, value: Expr) -> Branch:
        if self.at(","):
            self.take()
        if self.at("otherwise"):
            self.take()
            return Branch(value, None, self.end_of_line())
        self.expect("if", "'if <condition>' or 'otherwise' after ','")
        cond = self.expr()
        return Branch(value, cond, self.end_of_line())

    def piecewise(self, first: Expr) -> Piecewise:
        branches = [self.branch_tail(first)]
        while branches[-1].cond is not None and self.continues():
            branches.append(self.branch_tail(self.expr()))
        return Piecewise(tuple(branches))

    def continues(self) -> bool:
        """The next line continues a piecewise block: it is not blank, not a
        comment and not a new statement."""
        return self.tok.kind not in (Kind.NEWLINE, Kind.END, Kind.COMMENT) and not self.at_statement_start()

    def if_chain(self) -> Piecewise:
        branches: list[Branch] = []
        while True:
            if self.at("else"):
                self.take()
                if self.at("then"):
                    self.take()
                value = self.expr()
                branches.append(Branch(value, None, self.end_of_line()))
                return Piecewise(tuple(branches))
            self.expect("if", "'if' or 'else'")
            cond = self.expr()
            self.expect("then")
            value = self.expr()
            if self.at("else"):  # inline: if c then a else b
                branches.append(Branch(value, cond, None))
                continue
            branches.append(Branch(value, cond, self.end_of_line()))
            if not self.at("if", "else"):
                return Piecewise(tuple(branches))

    # -- expressions ---------------------------------------------------
    def expr(self) -> Expr:
        with self.nested():
            cond = self.binary(1)
            if not self.at("?"):
                return cond
            self.take()
            then = self.expr()
            self.expect(":")
            return Conditional(cond, then, self.expr())

    def binary(self, min_prec: int) -> Expr:
        left = self.unary()
        while self.tok.kind is Kind.OP and BINARY_PRECEDENCE.get(self.tok.text, 0) >= min_prec:
            op = self.take().text
            with self.nested():
                right = self.binary(BINARY_PRECEDENCE[op] + 1)
            left = Binary(op, left, right)
        return left

    def unary(self) -> Expr:
        if self.tok.kind is Kind.OP and self.tok.text in UNARY_OPS:
            op = self.take().text
            with self.nested():
                return Unary(op, self.unary())
        return self.power()

    def power(self) -> Expr:
        base = self.primary()
        if self.at("^"):
            self.take()
            with self.nested():
                return Binary("^", base, self.unary())
        return base

    def primary(self) -> Expr:
        t = self.tok
        if t.kind is Kind.NUM:
            self.take()
            return Num(t.text)
        if t.kind is Kind.NAME and t.text not in KEYWORDS:
            self.take()
            if not self.at("("):
                return Name(t.text)
            if t.text == INTEGRAL:
                return self.integral()
            return Call(t.text, self.arguments())
        if self.at("("):
            self.take()
            inner = self.expr()
            self.expect(")")
            return inner
        self.fail("expected a number, a name or '('")
        raise AssertionError  # unreachable: fail raises

    def arguments(self) -> tuple[Expr, ...]:
        self.expect("(")
        args: list[Expr] = []
        if not self.at(")"):
            args.append(self.expr())
            while self.at(","):
                self.take()
                args.append(self.expr())
        self.expect(")", "',' or ')'")
        return tuple(args)

    def integral(self) -> Integral:
        self.expect("(")
        if self.tok.kind is not Kind.NAME:
            self.fail("expected the integration variable")
        var = self.take().text
        self.expect("=")
        lower = self.expr()
        self.expect("to", "'to'")
        upper = self.expr()
        self.expect(",")
        body = self.expr()
        self.expect(")")
        return Integral(var, lower, upper, body)
