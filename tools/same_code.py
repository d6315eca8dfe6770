"""Prove that a move of code is only a move: every function, class attribute and top-level
statement of OLD stands in NEW with the same syntax tree, once the declared changes of name are
applied to OLD. Decorators may only gain @staticmethod; docstrings are compared too.

    python tools/same_code.py OLD.py NEW.py [--moved A.f=B.g] [--method A.f=B.g] [--renamed A.x=B.x]

--moved A.f=B.g    member f of class A is now g in class B (B empty: module-level g), every
                   `A.f` reads `B.g`
--method A.f=B.g   function f(store, ...) of A is now the method g(self, ...) of store class B:
                   `A.f(x, ...)` reads `x.g(...)`, its own `store` reads `self`
--renamed A.x=B.x  an attribute reference that now names another home
--attr A.f=A.g     method f of class A is now g, and every `<anything>.f` reads `.g`

Exit 0 and a summary when everything matches; 1 and each difference otherwise.
"""
import argparse
import ast
import sys


def pairs(values):
    out = {}
    for v in values or ():
        old, new = v.split("=")
        out[tuple(old.split("."))] = tuple(new.split(".")) if "." in new else ("", new)
    return out


class Normalise(ast.NodeTransformer):
    """OLD's tree as NEW should read it."""

    def __init__(self, moved, methods, renamed, attrs=()):
        self.refs = {**moved, **renamed}
        self.methods = methods
        self.attrs = {old[1]: new[1] for old, new in dict(attrs).items()}

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                and (f.value.id, f.attr) in self.methods and node.args):
            _, new = self.methods[(f.value.id, f.attr)]
            node.func = ast.Attribute(value=node.args[0], attr=new, ctx=ast.Load())
            node.args = node.args[1:]
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and (node.value.id, node.attr) in self.refs:
            cls, name = self.refs[(node.value.id, node.attr)]
            if not cls:
                return ast.Name(id=name, ctx=node.ctx)
            return ast.Attribute(value=ast.Name(id=cls, ctx=ast.Load()), attr=name, ctx=node.ctx)
        if node.attr in self.attrs:
            node.attr = self.attrs[node.attr]
        return node


class SelfForStore(ast.NodeTransformer):
    def visit_Name(self, node):
        if node.id == "store":
            node.id = "self"
        return node

    def visit_arg(self, node):
        if node.arg == "store":
            node.arg = "self"
        return node


def name(node):
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, ast.Assign):
        t = node.targets[0]
        if isinstance(t, ast.Name):
            return t.id
        if isinstance(t, ast.Tuple) and all(isinstance(e, ast.Name) for e in t.elts):
            return ",".join(e.id for e in t.elts)
    return ast.dump(node)[:80]


def inventory(tree):
    """{key: node}: functions by qualified name, class attributes, other top-level statements."""
    out = {}

    def add(key, node):
        while key in out:
            key += "'"
        out[key] = node

    for n in tree.body:
        if isinstance(n, ast.ClassDef):
            add(("class", n.name), ast.ClassDef(name=n.name, bases=n.bases, keywords=n.keywords,
                                                body=[], decorator_list=n.decorator_list))
            for m in n.body:
                add((n.name, name(m)), m)
        else:
            add(("", name(n)), n)
    return out


def dump(node):
    if isinstance(node, ast.FunctionDef):
        node = ast.FunctionDef(
            name=node.name, args=node.args, body=node.body, returns=node.returns,
            type_comment=None, type_params=[],
            decorator_list=[d for d in node.decorator_list
                            if not (isinstance(d, ast.Name) and d.id == "staticmethod")])
    return ast.dump(node)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--moved", action="append")
    ap.add_argument("--method", action="append")
    ap.add_argument("--renamed", action="append")
    ap.add_argument("--attr", action="append")
    ap.add_argument("--bases", action="append", help="A=B: class A's bases are now (B)")
    ap.add_argument("--new-class", action="append", default=[],
                    help="a class NEW adds (its docstring and members are compared as moved)")
    a = ap.parse_args(argv)
    moved, methods, renamed = pairs(a.moved), pairs(a.method), pairs(a.renamed)
    attrs = pairs(a.attr)
    moved.update(attrs)
    old = ast.parse(open(a.old, encoding="utf-8").read())
    new = ast.parse(open(a.new, encoding="utf-8").read())
    for tree in (old, new):              # the module docstring holds the table of sections
        if tree.body and isinstance(tree.body[0], ast.Expr):
            del tree.body[0]
    old_inv = inventory(old)
    norm = Normalise({k: v for k, v in moved.items() if k not in attrs}, methods, renamed, attrs)
    mapped = {}
    for key, node in old_inv.items():
        home = key
        if key in methods:
            node = SelfForStore().visit(node)
            home = methods[key]
        elif key in moved:
            home = moved[key]
        node = norm.visit(node)
        if isinstance(node, ast.FunctionDef):
            node.name = home[1]
        if key[0] == "class" and a.bases:
            for b in a.bases:
                cls, base = b.split("=")
                if key[1] == cls:
                    node.bases = [ast.Name(id=base, ctx=ast.Load())]
        mapped[home] = node
    new_inv = inventory(new)
    bad = []
    doc = name(ast.Expr(value=ast.Constant(value="")))[:20]
    for key, node in mapped.items():
        if key not in new_inv:
            bad.append(f"missing in NEW: {'.'.join(k for k in key if k)[:100]}")
        elif dump(node) != dump(new_inv[key]):
            bad.append(f"differs: {'.'.join(k for k in key if k)[:100]}")
    extra = [k for k in new_inv if k not in mapped and not (
        (k[0] == "class" and k[1] in a.new_class) or (k[0] in a.new_class and k[1].startswith(doc)))]
    bad += [f"only in NEW: {'.'.join(x for x in k if x)[:100]}" for k in extra]
    functions = sum(isinstance(n, ast.FunctionDef) for n in mapped.values())
    for line in bad:
        print(line)
    print(f"{len(mapped)} units compared ({functions} functions, "
          f"{len(mapped) - functions} class attributes, classes and statements): "
          f"{len(mapped) - len(bad)} the same, {len(bad)} not")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
