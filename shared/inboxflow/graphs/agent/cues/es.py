"""Spanish cues of the agent's escalations."""

MEDICAL_ADVICE: tuple[str, ...] = (
    "dosis",
    "cuántas pastillas",
    "cuántos comprimidos",
    "cada cuánto",
    "puedo tomar",
    "es seguro",
    "embarazada",
    "embarazo",
    "lactancia",
    "amamant",
    "interacción",
    "junto con",
    "efecto secundario",
    "efectos secundarios",
    "dejar de tomar",
    "sobredosis",
    "se tragó",
    "intoxicación",
)
CHILD: tuple[str, ...] = ("mi hijo", "mi hija", "mi bebé", "niño", "niña")
CHILD_USE: tuple[str, ...] = ("dar", "cuánto", "fiebre")
COMPLAINT: tuple[str, ...] = (
    "queja",
    "reclamación",
    "inaceptable",
    "vergüenza",
    "indignad",
    "enfadad",
    "harto",
    "frustrad",
    "nadie responde",
    "nadie contesta",
    "otra farmacia",
)
