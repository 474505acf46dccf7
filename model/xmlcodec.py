"""A fast reader and writer for the pydantic-xml message models, derived from the models themselves.

pydantic-xml validates every field of every nested model: a memento with a full board (one model per
``<field>``) takes milliseconds to read or write that way. This module builds, once per model class and from
the same field declarations (attribute and element names, types, their pydantic validators and serializers,
the order), a reader and a writer that do the same work directly with lxml and strings. A field is
described once, in its model; nothing here knows a message.

* :func:`read`: the model of an element exactly as ``model.from_xml_tree`` gives it (values, defaults,
  ``model_fields_set``, after-validators run), for the plain form of a message: only attributes and
  children the model declares, each single child at most once, no comments, a text for every leaf, values
  that the fields' own validators accept. Anything else gives None, and the caller takes pydantic-xml,
  which stays the lenient reader and the one that reports errors. Values are validated by the fields'
  pydantic validators, memoised per raw string (a bounded memo), so the work is linear in the input.
* :func:`write`: what lxml writes for ``message.to_xml_tree(exclude_none=True)`` (compact, or
  pretty-printed with 2-space indentation and no final newline), with XStream's escapes (``'`` →
  ``&apos;``, newline → ``&#xa;``, ...). A model may declare another order of its fields for instances
  with a given field set (:data:`LAYOUTS_ATTRIBUTE`); pydantic-xml knows only the declaration order.
* :func:`construct`: a model of valid values without validation (``model_construct`` cannot take a field
  named ``cls``).

tests/test_xmlcodec.py checks both against pydantic-xml on every fixture of both seasons and on generated
instances of every message model.
"""

from __future__ import annotations

import contextlib
import operator
import re
import threading
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from lxml import etree
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_xml import BaseXmlModel
from pydantic_xml.fields import XmlEntityInfo
from pydantic_xml.typedefs import EntityLocation

Model = TypeVar("Model", bound=BaseXmlModel)

# ``ClassVar`` of a model: {field: (field names in the order to write)}; an instance whose ``field`` is set is
# written with the named fields first, in that order, and the others after them in declaration order.
LAYOUTS_ATTRIBUTE = "xml_layouts"
# ``ClassVar`` of a model: the fields whose ``xml_field_validator`` checks only what the fast reader requires
# anyway (a child present once); any other xml_field_validator makes the model unsupported here.
CHECKED_ATTRIBUTE = "xml_checked_by_reader"

# The memos of values (names, numbers) are bounded: at most _MEMO_LIMIT strings of at most _MEMO_LENGTH characters
# per field type (untrusted input cannot make them grow); other values are validated (or written) each time.
_MEMO_LIMIT = 512
_MEMO_LENGTH = 64
# whole elements of attributes only (a board's <field>: 20 × 20 × 4 colours), the same bounds
_ELEMENT_MEMO_LIMIT = 2048
_ELEMENT_MEMO_LENGTH = 128
_MISSING = object()


class _Decline(Exception):
    """Inside the reader: not the plain form, leave the element to pydantic-xml."""


class UnsupportedModel(TypeError):
    """A model declares something this module cannot reproduce exactly (namespaces, wrappers, other validators)."""


# --- the values of one field type ----------------------------------------------------------------------------


class _Reads(dict[str, Any]):
    """Raw string -> value through the field type's pydantic validator, memoised (a bounded memo); an invalid
    string declines the element."""

    __slots__ = ("validate",)

    def __init__(self, annotation: Any) -> None:
        super().__init__()
        self.validate = None if annotation is str else TypeAdapter(annotation).validate_python

    def __missing__(self, raw: str) -> Any:
        if self.validate is None:  # str: the raw text is the value
            return raw
        try:
            value = self.validate(raw)
        except ValidationError:
            raise _Decline from None
        if len(self) < _MEMO_LIMIT and len(raw) <= _MEMO_LENGTH:
            self[raw] = value
        return value


class _Writes(dict[Any, str]):
    """Value -> its escaped XML piece (`` name="…"``, ``<tag>…</tag>`` or a text) as pydantic-xml and lxml
    write it, memoised (a bounded memo)."""

    __slots__ = ("serialize", "plain", "form")

    def __init__(self, annotation: Any, form: Callable[[str], str]) -> None:
        super().__init__()
        self.plain = annotation is str
        self.serialize = TypeAdapter(annotation).serializer.to_python
        self.form = form

    def __missing__(self, value: Any) -> str:
        if self.plain:
            if type(value) is not str:
                raise TypeError(f"not a str: {value!r}")
            text = value
        else:
            encoded = self.serialize(value, mode="json")
            text = str(encoded).lower() if isinstance(encoded, bool) else str(encoded)  # pydantic-xml's form
        piece = self.form(text)
        if len(self) < _MEMO_LIMIT and len(piece) <= _MEMO_LENGTH:
            self[value] = piece
        return piece


# --- escaping as lxml writes and XStream reads ---------------------------------------------------------------

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")  # what lxml refuses to write
_ATTR_SPECIAL = re.compile("[&<>\"'\n\r\t]")
_TEXT_SPECIAL = re.compile("[&<>'\r]")
_ATTR_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}
_ATTR_ESCAPES |= {"\n": "&#xa;", "\r": "&#xd;", "\t": "&#x9;"}
_TEXT_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "'": "&apos;", "\r": "&#xd;"}


def _xml_safe(text: str) -> str:
    if _NOT_XML.search(text):
        raise ValueError("All strings must be XML compatible: Unicode or ASCII, no NULL bytes or control characters")
    return text


def _attribute(text: str) -> str:
    text = _xml_safe(text)
    return _ATTR_SPECIAL.sub(lambda m: _ATTR_ESCAPES[m[0]], text) if _ATTR_SPECIAL.search(text) else text


def _text(text: str) -> str:
    text = _xml_safe(text)
    return _TEXT_SPECIAL.sub(lambda m: _TEXT_ESCAPES[m[0]], text) if _TEXT_SPECIAL.search(text) else text


# --- the schema of a model -----------------------------------------------------------------------------------


@dataclass(eq=False)
class _Field:
    name: str
    xml: str  # attribute name or element tag ("" for the text)
    location: str  # "attribute", "element" or "text"
    many: bool = False
    reads: _Reads | None = None  # a primitive
    writes: _Writes | None = None
    model: _Schema | None = None  # a model
    union: dict[str, _Schema] | None = None  # a discriminated union: the discriminator's XML value -> model
    union_attribute: str = ""
    written: bool = True  # excluded fields are read but never written


@dataclass(eq=False)
class _Layout:
    attributes: list[tuple[str, _Writes]]
    elements: list[_Field]
    text: _Field | None


def _unbuilt(_: Any) -> Any:
    raise UnsupportedModel("a model that contains itself")


@dataclass(eq=False)
class _Schema:
    model: type[BaseXmlModel]
    tag: str
    attributes: dict[str, _Field]
    children: dict[str, _Field]
    text: _Field | None
    required: frozenset[str]
    defaults: dict[str, Any]  # every field in declaration order (a required one: _MISSING)
    factories: dict[str, Callable[[], Any]]
    after: list[Callable[[Any], Any]]
    layout: _Layout
    layouts: list[tuple[str, _Layout]]
    read: Callable[[etree._Element], BaseModel] = _unbuilt
    make: Callable[[dict[str, Any]], BaseModel] = _unbuilt
    write: Callable[..., None] = _unbuilt


_SCHEMAS: dict[type[BaseXmlModel], _Schema] = {}  # complete schemas only (read without the lock)
_BUILT: dict[type[BaseXmlModel], _Schema] = {}  # schemas being built, under _BUILDING
_NESTED_BUILDS = 0  # builds in progress (a model's, then its fields' models) under _BUILDING


_BUILDING = threading.RLock()  # a schema is complete before another thread sees it (a model may contain itself)


def _schema(model: type[BaseXmlModel]) -> _Schema:
    schema = _SCHEMAS.get(model)
    if schema is not None:
        return schema
    global _NESTED_BUILDS
    with _BUILDING:
        schema = _SCHEMAS.get(model) or _BUILT.get(model)
        if schema is not None:
            return schema
        _NESTED_BUILDS += 1
        try:
            schema = _build(model)
        except BaseException:
            if _NESTED_BUILDS == 1:
                _BUILT.clear()  # nothing of a failed build is kept: the next use fails the same way
            raise
        finally:
            _NESTED_BUILDS -= 1
        if _NESTED_BUILDS == 0:  # the outermost build: its schemas, all complete, published at once
            _SCHEMAS.update(_BUILT)
            _BUILT.clear()
    return schema


def _unsupported(model: type, what: str) -> UnsupportedModel:
    return UnsupportedModel(f"{model.__name__}: {what}")


def _build(model: type[BaseXmlModel]) -> _Schema:
    if model.__private_attributes__ or getattr(model, "__xml_field_serializers__", None):
        raise _unsupported(model, "private attributes or xml field serializers")
    decorators = model.__pydantic_decorators__
    if decorators.field_validators or decorators.validators or decorators.root_validators:
        raise _unsupported(model, "field validators")
    if decorators.field_serializers or decorators.model_serializers or decorators.computed_fields:
        raise _unsupported(model, "serializers")
    after = []
    for decorator in decorators.model_validators.values():
        if decorator.info.mode != "after":
            raise _unsupported(model, f"a {decorator.info.mode} model validator")
        after.append(decorator.func)
    checked = set(getattr(model, CHECKED_ATTRIBUTE, ()))
    if set(model.__xml_field_validators__) - checked:
        raise _unsupported(model, f"xml field validators {sorted(set(model.__xml_field_validators__) - checked)}")

    schema = _Schema(
        model=model,
        tag=model.__xml_tag__ or model.__name__,
        attributes={},
        children={},
        text=None,
        required=frozenset(),
        defaults={},
        factories={},
        after=after,
        layout=_Layout([], [], None),
        layouts=[],
    )
    _BUILT[model] = schema  # before the fields: a model may contain itself
    fields: list[_Field] = []
    required = set()
    for name, info in model.model_fields.items():
        field = _field(model, name, info)
        fields.append(field)
        if field.location == "attribute":
            schema.attributes[field.xml] = field
        elif field.location == "element":
            if field.xml in schema.children:
                raise _unsupported(model, f"two fields of <{field.xml}>")
            schema.children[field.xml] = field
        else:
            schema.text = field
        if info.is_required():
            required.add(name)
            schema.defaults[name] = _MISSING
        elif info.default_factory is not None:
            schema.defaults[name] = _MISSING
            schema.factories[name] = info.default_factory  # type: ignore[assignment]
        else:
            schema.defaults[name] = info.default
    if schema.text is not None and schema.children:
        raise _unsupported(model, "text and child elements")
    schema.required = frozenset(required)
    schema.layout = _layout([f for f in fields if f.written])
    by_name = {f.name: f for f in fields}
    for when, order in getattr(model, LAYOUTS_ATTRIBUTE, {}).items():
        first = [by_name[name] for name in order]
        rest = [f for f in fields if f.name not in order]
        schema.layouts.append((when, _layout([f for f in first + rest if f.written])))
    schema.make = _maker(schema)
    schema.read = _reader(schema)
    schema.write = _writer(schema)
    return schema


def _layout(fields: list[_Field]) -> _Layout:
    return _Layout(
        attributes=[(f.name, f.writes) for f in fields if f.location == "attribute"],  # type: ignore[misc]
        elements=[f for f in fields if f.location == "element"],
        text=next((f for f in fields if f.location == "text"), None),
    )


def _optional(annotation: Any) -> Any:
    """``X | None`` -> ``X``."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) < len(typing.get_args(annotation)):
            return args[0] if len(args) == 1 else typing.Union[tuple(args)]  # noqa: UP007
    return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseXmlModel)


def _field(model: type[BaseXmlModel], name: str, info: Any) -> _Field:
    entity = next((m for m in info.metadata if isinstance(m, XmlEntityInfo)), None)
    other = [m for m in info.metadata if not isinstance(m, XmlEntityInfo)]
    if entity is not None and (entity.ns or entity.nsmap or entity.nillable or entity.wrapped):
        raise _unsupported(model, f"{name}: namespaces, nil or wrapped elements")
    if info.alias is not None:
        raise _unsupported(model, f"{name}: an alias")
    annotation = _optional(info.annotation)
    many = typing.get_origin(annotation) is list
    if many:
        (annotation,) = typing.get_args(annotation)
        if other:
            raise _unsupported(model, f"{name}: constraints on a list")
    location = {None: "text", EntityLocation.ATTRIBUTE: "attribute", EntityLocation.ELEMENT: "element"}.get(
        None if entity is None else entity.location
    )
    if location is None:
        raise _unsupported(model, f"{name}: location {entity}")
    field = _Field(name=name, xml="", location=location, many=many, written=not info.exclude)
    if location == "attribute":
        field.xml = entity.path or name  # type: ignore[union-attr]
    elif location == "element":
        field.xml = entity.path or name  # type: ignore[union-attr]
    members = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) else ()
    if _is_model(annotation):
        field.model = _schema(annotation)
    elif members and all(_is_model(m) for m in members):
        if info.discriminator is None or location != "element" or many:
            raise _unsupported(model, f"{name}: a union without a discriminator")
        field.union = {}
        for member in members:
            tag_field = member.model_fields[info.discriminator]
            (member_entity,) = (m for m in tag_field.metadata if isinstance(m, XmlEntityInfo))
            field.union_attribute = member_entity.path or info.discriminator
            for value in typing.get_args(tag_field.annotation):
                field.union[value] = _schema(member)
    else:
        if location != "element" and many:
            raise _unsupported(model, f"{name}: a list outside elements")
        annotation = Annotated[annotation, *other] if other else annotation
        field.reads = _Reads(annotation)
        field.writes = _Writes(annotation, _form(location, field.xml))
    if location != "element" and field.reads is None:
        raise _unsupported(model, f"{name}: a model outside an element")
    return field


def _form(location: str, xml: str) -> Callable[[str], str]:
    if location == "attribute":
        return lambda text: f' {xml}="{_attribute(text)}"'
    if location == "element":
        return lambda text: f"<{xml}>{_text(text)}</{xml}>"
    return _text


# --- reading -------------------------------------------------------------------------------------------------


def read(model: type[Model], element: etree._Element) -> Model | None:
    """``model.from_xml_tree(element)`` for the plain form of the element, or None for anything else."""
    schema = _schema(model)
    if element.tag != schema.tag:
        return None
    try:
        return schema.read(element)  # type: ignore[return-value]
    except _Decline:
        return None


def _reader(schema: _Schema) -> Callable[[etree._Element], BaseModel]:
    """The reader of one model: its fields' readers put together once."""
    attributes = {key: (f.name, f.reads) for key, f in schema.attributes.items()}
    children = {tag: (f.name, f.many, _child_reader(f)) for tag, f in schema.children.items()}
    text = None if schema.text is None else (schema.text.name, schema.text.reads)
    required, after, make, model = schema.required, schema.after, schema.make, schema.model
    if len(required) == len(schema.defaults) and not children and text is None and not after:
        count = len(required)

        def flat(element: etree._Element) -> BaseModel:  # e.g. a board's <field>: 400 in a memento
            if len(element):
                raise _Decline
            values: dict[str, Any] = {}
            for key, raw in element.items():
                try:
                    name, reads = attributes[key]
                except KeyError:
                    raise _Decline from None
                values[name] = reads[raw]  # type: ignore[index]
            if len(values) != count:
                raise _Decline
            return _instance(model, values, set(values))

        return flat

    def read(element: etree._Element) -> BaseModel:
        values: dict[str, Any] = {}
        for key, raw in element.items():
            try:
                name, reads = attributes[key]
            except KeyError:
                raise _Decline from None
            values[name] = reads[raw]  # type: ignore[index]
        if text is not None:
            raw = element.text
            if not raw:  # pydantic-xml reads an empty text as absent
                raise _Decline
            values[text[0]] = text[1][raw]  # type: ignore[index]
        if not children:
            if len(element):
                raise _Decline
        else:
            for child in element:
                try:
                    name, many, read_child = children[child.tag]  # a comment's tag is a function: not found
                except KeyError:
                    raise _Decline from None
                if not many:
                    if name in values:
                        raise _Decline
                    values[name] = read_child(child)
                elif name in values:
                    values[name].append(read_child(child))
                else:
                    values[name] = [read_child(child)]
        if not required <= values.keys():
            raise _Decline
        instance = make(values)
        if after:
            try:
                for validator in after:
                    validator(instance)
            except (ValueError, AssertionError):
                raise _Decline from None
        return instance

    return read


def _child_reader(field: _Field) -> Callable[[etree._Element], Any]:
    if field.model is not None:
        return field.model.read  # built before this model (a model that contains itself is refused)
    if field.union is not None:
        members, attribute = field.union, field.union_attribute

        def member(child: etree._Element) -> BaseModel:
            schema = members.get(child.get(attribute))
            if schema is None:
                raise _Decline
            return schema.read(child)

        return member
    reads = field.reads

    def leaf(child: etree._Element) -> Any:
        if len(child) or child.keys():
            raise _Decline
        raw = child.text
        if not raw:  # pydantic-xml reads an empty leaf as absent
            raise _Decline
        return reads[raw]  # type: ignore[index]

    return leaf


_new = object.__new__
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__pydantic_fields_set__.__set__  # type: ignore[attr-defined]
_set_extra = BaseModel.__pydantic_extra__.__set__  # type: ignore[union-attr]
_set_private = BaseModel.__pydantic_private__.__set__  # type: ignore[union-attr]


def _instance(model: type[BaseModel], values: dict[str, Any], fields_set: set[str]) -> BaseModel:
    """An instance of ``model`` holding ``values`` (already valid), as pydantic's own constructor leaves it."""
    instance = _new(model)
    _set_dict(instance, values)
    _set_fields_set(instance, fields_set)
    _set_extra(instance, None)
    _set_private(instance, None)
    return instance


def _maker(schema: _Schema) -> Callable[[dict[str, Any]], BaseModel]:
    """Values -> an instance without validation: defaults for the fields not given, ``model_fields_set`` = the
    given ones (what ``model_construct`` does, which cannot take a field named ``cls``)."""
    model, required, defaults, factories = schema.model, schema.required, schema.defaults, schema.factories
    if len(required) == len(defaults):  # every field given, e.g. a board's <field>: 400 in a memento
        names = tuple(defaults)  # the declaration order, as pydantic keeps it

        def make_all(values: dict[str, Any]) -> BaseModel:
            if tuple(values) != names:  # another order, or other fields
                if values.keys() != required:
                    raise TypeError(f"{model.__name__}: fields {sorted(values)} (declared: {sorted(defaults)})")
                values = {name: values[name] for name in names}
            return _instance(model, values, set(required))  # the caller's new dict, taken over

        return make_all

    def make(values: dict[str, Any]) -> BaseModel:
        full = defaults | values
        if len(full) != len(defaults) or not required <= values.keys():
            raise TypeError(f"{model.__name__}: fields {sorted(values)} (declared: {sorted(defaults)})")
        if len(values) < len(full):
            for name, factory in factories.items():
                if name not in values:
                    full[name] = factory()
        return _instance(model, full, set(values))

    return make


def maker(model: type[Model]) -> Callable[[dict[str, Any]], Model]:
    """A function of a dict of values already valid -> ``model(**values)`` without validation; defaults for the
    fields not given, ``model_fields_set`` = the given ones. The dict may become the instance's: pass a new one."""
    return _schema(model).make  # type: ignore[return-value]


def construct(model: type[Model], /, **values: Any) -> Model:
    """``model(**values)`` of values already valid, without validation (see :func:`maker`)."""
    return _schema(model).make(values)  # type: ignore[return-value]


# --- writing -------------------------------------------------------------------------------------------------

_DEPTH = 32  # deeper than any message model
_PRETTY = (tuple(["", *("\n" + "  " * d for d in range(1, _DEPTH))]), tuple("\n" + "  " * d for d in range(_DEPTH)))
_COMPACT = (("",) * _DEPTH, ("",) * _DEPTH)


def write(message: BaseXmlModel, *, pretty: bool = False) -> str:
    """The XML of a message as pydantic-xml and lxml write it (unset optional parts left out), with XStream's
    escapes; ``pretty``: 2-space indentation, no final newline. Raises ValueError for text lxml would refuse
    (control characters)."""
    schema = _schema(type(message))
    out: list[str] = []
    schema.write(message, schema.tag, out, 0, _PRETTY if pretty else _COMPACT)
    return "".join(out)


Pads = tuple[tuple[str, ...], tuple[str, ...]]  # (before a start tag, before an end tag) by depth
Writer = Callable[[Any, str, list[str], int, Pads], None]


def _any(instance: Any, tag: str, out: list[str], depth: int, pads: Pads) -> None:
    """The writer of an instance's own class (a member of a union)."""
    if not isinstance(instance, BaseXmlModel):
        raise TypeError(f"not a message model: {instance!r}")
    _schema(type(instance)).write(instance, tag, out, depth, pads)


def _writer(schema: _Schema) -> Writer:
    """The writer of one model: its fields' writers put together once, per layout."""
    default = _layout_writer(schema.model, schema.layout)
    if not schema.layouts:
        return default
    layouts = [(when, _layout_writer(schema.model, layout)) for when, layout in schema.layouts]

    def write(instance: Any, tag: str, out: list[str], depth: int, pads: Pads) -> None:
        values = instance.__dict__
        for when, writer in layouts:
            if values[when] is not None:
                return writer(instance, tag, out, depth, pads)
        return default(instance, tag, out, depth, pads)

    return write


def _layout_writer(model: type[BaseXmlModel], layout: _Layout) -> Writer:
    attributes = layout.attributes
    text = None if layout.text is None else (layout.text.name, layout.text.writes)
    elements = [(f.name, f.many, f.xml, f.writes, _any if f.model is None else f.model.write) for f in layout.elements]
    if text is None and not elements:  # attributes only, e.g. a board's <field>: 400 in a memento
        key_of = operator.itemgetter(*(name for name, _ in attributes)) if attributes else (lambda _: ())
        memo: dict[tuple[str, Any], str] = {}  # (tag, values) -> the element: a board's few hundred <field>s

        def write_empty(instance: Any, tag: str, out: list[str], depth: int, pads: Pads) -> None:
            if type(instance) is not model and not isinstance(instance, model):
                raise TypeError(f"not a {model.__name__}: {instance!r}")
            values = instance.__dict__
            key = (tag, key_of(values))
            try:
                element = memo[key]
            except (KeyError, TypeError):  # TypeError: a value that is no dict key
                pieces = [writes[values[name]] for name, writes in attributes if values[name] is not None]
                element = "<" + tag + "".join(pieces) + "/>"
                if len(memo) < _ELEMENT_MEMO_LIMIT and len(element) <= _ELEMENT_MEMO_LENGTH:
                    with contextlib.suppress(TypeError):
                        memo[key] = element
            out.append(pads[0][depth] + element)

        return write_empty

    def write(instance: Any, tag: str, out: list[str], depth: int, pads: Pads) -> None:
        if type(instance) is not model and not isinstance(instance, model):
            raise TypeError(f"not a {model.__name__}: {instance!r}")  # (a subclass: written as the field's model)
        values = instance.__dict__
        start = pads[0][depth] + "<" + tag
        for name, writes in attributes:
            value = values[name]
            if value is not None:
                start += writes[value]
        if text is not None and values[text[0]] is not None:
            out.append(f"{start}>{text[1][values[text[0]]]}</{tag}>")  # type: ignore[index]
            return None
        if not elements:
            out.append(start + "/>")
            return None
        out.append(start)
        mark = len(out)
        child = depth + 1
        pad = pads[0][child]
        for name, many, xml, leaf, write_model in elements:
            value = values[name]
            if value is None:
                continue
            if leaf is not None:
                if many:
                    out.extend([pad + leaf[item] for item in value])
                else:
                    out.append(pad + leaf[value])
            elif many:
                for item in value:
                    write_model(item, xml, out, child, pads)
            else:
                write_model(value, xml, out, child, pads)
        if len(out) == mark:
            out[-1] += "/>"
        else:
            out[mark - 1] += ">"
            out.append(f"{pads[1][depth]}</{tag}>")
        return None

    return write
