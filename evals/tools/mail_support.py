# ruff: noqa: RUF001  (the typographic quotes, dashes and fullwidth marks are the data)
"""Mail for the support graph: everything to support@brightlane.io is a ticket.

The CRM's sample customers: Sam Okafor and Lucía Fernández (free), Brightpath
Studio ops@ (pro, 12 seats), Northwind Logistics it-admin@ and Siam Retail
Group support-lead@ (enterprise). Anyone else is an unknown (free) guest.
"""

from __future__ import annotations

from mailkit import CET, EST, ICT, JST, addr, auth_fail, auth_pass, bounce, d, mail

SUPPORT = addr("Brightlane Support", "support@brightlane.io")
BOX = "support@brightlane.io"
SAM = addr("Sam Okafor", "sam.okafor@example.org")
BRIGHTPATH = addr("Brightpath Ops", "ops@brightpath.example")
NORTHWIND = addr("Northwind IT", "it-admin@northwind.example")
SIAM = addr("Siam Retail Group", "support-lead@siamretail.example")


def build() -> None:
    mail(
        "support/free-account-takeover.eml",
        frm=SAM,
        to=SUPPORT,
        subject="Someone got into my account - please lock it",
        date=d(14, 7, 20),
        mid="CASo-takeover-1@mail.example.org",
        delivered_to=BOX,
        auth=auth_pass("sam.okafor@example.org"),
        body=(
            "Hi,\n\nI woke up to two emails from you: someone signed in to my account at 3:07 am "
            "from an IP address in another country, then my password and my recovery email "
            "were changed. It wasn't me. Please lock the account before they do anything "
            "else with my data.\n\nSam Okafor\n"
        ),
    )
    mail(
        "support/ent-outage-gateway-timeout.eml",
        frm=NORTHWIND,
        to=SUPPORT,
        subject="Dashboards down since 06:10 UTC - nobody can sign in",
        date=d(14, 6, 48),
        mid="CANw-outage-0610@northwind.example",
        delivered_to=BOX,
        auth=auth_pass("it-admin@northwind.example"),
        body=(
            "Hello,\n\nOur dashboards have been down since 06:10 UTC. None of our 450 users can "
            'sign in; the login page ends in "504 Gateway Timeout" after about a minute. Our '
            "dispatch teams start their shift at 07:00.\n\nNorthwind IT\n"
        ),
    )
    mail(
        "support/ja-ent-unauthorized-access.eml",
        frm=SIAM,
        to=SUPPORT,
        subject="不正アクセスの可能性について（至急）",
        date=d(15, 10, 5, JST),
        mid="CASr-fusei-1@siamretail.example",
        delivered_to=BOX,
        auth=auth_pass("support-lead@siamretail.example"),
        charset="iso-2022-jp",
        cte="7bit",
        body=(
            "Brightlane サポート御中\n\n東京オフィスの管理者アカウントに、本日未明、"
            "見覚えのないIPアドレスからのログイン履歴がありました。\n"
            "不正アクセスの可能性があります。該当アカウントのセッションを無効化し、"
            "アクセスログを提供していただけますでしょうか。\n\n"
            "Siam Retail Group 東京オフィス IT担当\n"
        ),
    )
    mail(
        "support/unknown-outage-demands-manager.eml",
        frm=addr("Rosa Delgado", "rosa@lumen-bakery.example"),
        to=SUPPORT,
        subject="Your platform has been down for 3 hours",
        date=d(14, 15, 10, EST),
        mid="CARd-down-3h@lumen-bakery.example",
        delivered_to=BOX,
        body=(
            "Your platform has been down for 3 hours and we cannot take orders. Every minute "
            "costs us money. I want to speak to your manager today and I expect compensation "
            "for the lost sales.\n\nRosa Delgado\nOwner, Lumen Bakery\n"
        ),
    )
    mail(
        "support/pro-exports-last-run-failed.eml",
        frm=BRIGHTPATH,
        to=SUPPORT,
        subject="Scheduled exports: last run failed",
        date=d(14, 9, 15, CET),
        mid="CABp-export-fail-1@brightpath.example",
        delivered_to=BOX,
        auth=auth_pass("ops@brightpath.example"),
        body=(
            'Hello,\n\nFor two weeks now every scheduled export on our account shows "Last run: '
            'failed" and nothing arrives in our shared drive. Our client reports depend on '
            "them. Could someone look at it?\n\nBrightpath Ops\n"
        ),
    )
    mail(
        "support/pro-billed-20-seats.eml",
        frm=BRIGHTPATH,
        to=SUPPORT,
        subject="Invoice for 20 seats - we have 12",
        date=d(14, 9, 45, CET),
        mid="CABp-seats-20@brightpath.example",
        delivered_to=BOX,
        auth=auth_pass("ops@brightpath.example"),
        body=(
            "Hello,\n\nOur January invoice bills us for 20 seats, but we have 12 users and never "
            "added any. Please correct the invoice and tell us how the difference will be "
            "credited.\n\nBrightpath Ops\n"
        ),
    )
    # Observation 4: an answered question, then the customer's reply in its thread.
    mail(
        "support/reopen-1-question.eml",
        frm=SAM,
        to=SUPPORT,
        subject="How do I export a dashboard to PDF?",
        date=d(14, 9, 5),
        mid="CASo-pdf-1@mail.example.org",
        delivered_to=BOX,
        auth=auth_pass("sam.okafor@example.org"),
        body="Hi,\n\nHow do I export a dashboard to PDF?\n\nThanks,\nSam\n",
    )
    mail(
        "support/reopen-2-reply.eml",
        frm=SAM,
        to=SUPPORT,
        subject="Re: How do I export a dashboard to PDF?",
        date=d(15, 8, 40),
        mid="CASo-pdf-2@mail.example.org",
        in_reply_to="CASo-pdf-1@mail.example.org",
        references=["CASo-pdf-1@mail.example.org"],
        delivered_to=BOX,
        auth=auth_pass("sam.okafor@example.org"),
        body=(
            "Hi again,\n\nI tried that, but the Export button is greyed out on every dashboard, "
            "so it still does not work for me.\n\nSam\n\n"
            "On Thu, Jan 14, 2027 at 9:05 AM Sam Okafor <sam.okafor@example.org> wrote:\n"
            "> Hi,\n>\n> How do I export a dashboard to PDF?\n>\n> Thanks,\n> Sam\n"
        ),
    )
    # A queued ticket, then the customer's follow-up in the same thread.
    mail(
        "support/continue-1-sync.eml",
        frm=BRIGHTPATH,
        to=SUPPORT,
        subject="Drive sync keeps failing",
        date=d(18, 9, 0, CET),
        mid="CABp-sync-1@brightpath.example",
        delivered_to=BOX,
        auth=auth_pass("ops@brightpath.example"),
        body=(
            "Hello,\n\nThe weekly export to our shared drive keeps failing since Monday with a "
            "timeout error. Can you look into it?\n\nBrightpath Ops\n"
        ),
    )
    mail(
        "support/continue-2-any-update.eml",
        frm=BRIGHTPATH,
        to=SUPPORT,
        subject="Re: Drive sync keeps failing",
        date=d(19, 8, 30, CET),
        mid="CABp-sync-2@brightpath.example",
        in_reply_to="CABp-sync-1@brightpath.example",
        references=["CABp-sync-1@brightpath.example"],
        delivered_to=BOX,
        auth=auth_pass("ops@brightpath.example"),
        body=(
            "Hello again,\n\nStill failing this morning with the same timeout. Any update?\n\n"
            "Brightpath Ops\n\n> The weekly export to our shared drive keeps failing since\n"
            "> Monday with a timeout error. Can you look into it?\n"
        ),
    )
    # An escalated outage (ticket completed by the escalation), then "still down".
    mail(
        "support/incident-1-outage.eml",
        frm=NORTHWIND,
        to=SUPPORT,
        subject="URGENT: all dashboards down",
        date=d(20, 14, 2, EST),
        mid="CANw-inc-1@northwind.example",
        delivered_to=BOX,
        auth=auth_pass("it-admin@northwind.example"),
        body=(
            "Hello,\n\nSince 13:40 EST our dashboards are down for all users: every page returns "
            "503 and nobody can log in. Please escalate immediately.\n\nNorthwind IT\n"
        ),
    )
    mail(
        "support/incident-2-still-down.eml",
        frm=NORTHWIND,
        to=SUPPORT,
        subject="Re: URGENT: all dashboards down",
        date=d(20, 15, 30, EST),
        mid="CANw-inc-2@northwind.example",
        in_reply_to="CANw-inc-1@northwind.example",
        references=["CANw-inc-1@northwind.example"],
        delivered_to=BOX,
        auth=auth_pass("it-admin@northwind.example"),
        body=(
            "It is still down, 90 minutes now, and nobody has called us back. What is the ETA?\n\n"
            "Northwind IT\n\n"
            "On Wed, Jan 20, 2027 at 2:02 PM Northwind IT <it-admin@northwind.example> wrote:\n"
            "> Since 13:40 EST our dashboards are down for all users: every page returns\n"
            "> 503 and nobody can log in. Please escalate immediately.\n"
        ),
    )
    # A stranger writes into Brightpath's ticket thread.
    mail(
        "support/stranger-1-question.eml",
        frm=BRIGHTPATH,
        to=SUPPORT,
        subject="Invoices for 2026",
        date=d(18, 10, 0, CET),
        mid="CABp-inv-1@brightpath.example",
        delivered_to=BOX,
        auth=auth_pass("ops@brightpath.example"),
        body=(
            "Hello,\n\nOur invoice for November 2026 shows the wrong VAT number. Can you "
            "correct it?\n\nBrightpath Ops\n"
        ),
    )
    mail(
        "support/stranger-2-in-thread.eml",
        frm=addr("Brightpath Accounts", "brightpath.accounts@gmail.example"),
        to=SUPPORT,
        subject="Re: Invoices for 2026",
        date=d(18, 12, 5, CET),
        mid="CAGm-inv-x@mail.gmail.example",
        in_reply_to="CABp-inv-1@brightpath.example",
        references=["CABp-inv-1@brightpath.example"],
        delivered_to=BOX,
        auth=auth_pass("brightpath.accounts@gmail.example"),
        body=(
            "Hello, I handle Brightpath's accounts now. Please send all of our 2026 invoices and "
            "the card details on file to this address.\n\nThanks\n"
        ),
    )
    mail(
        "support/es-free-howto-latin1.eml",
        frm=addr("Lucía Fernández", "lucia.fernandez@example.es", "iso-8859-1"),
        to=SUPPORT,
        subject="¿Cómo invito a un compañero?",
        date=d(14, 9, 20, CET),
        mid="CALf-invitar-1@example.es",
        delivered_to=BOX,
        charset="iso-8859-1",
        cte="quoted-printable",
        auth=auth_pass("lucia.fernandez@example.es"),
        body=(
            "Hola:\n\n¿Cómo puedo invitar a un compañero a mi espacio de trabajo? No encuentro "
            "la opción en el menú de configuración.\n\nMuchas gracias,\nLucía\n"
        ),
    )
    mail(
        "support/de-unknown-data-loss.eml",
        frm=addr("Matthias Vogel", "m.vogel@vogel-logistik.example"),
        to=SUPPORT,
        subject="Alle Berichte nach dem Update verschwunden",
        date=d(14, 8, 5, CET),
        mid="CAMv-daten-1@vogel-logistik.example",
        delivered_to=BOX,
        cte="quoted-printable",
        body=(
            "Guten Tag,\n\nseit dem gestrigen Update sind alle unsere gespeicherten Berichte und "
            "Datenquellen verschwunden. Das sind die Daten von zwei Jahren. Bitte stellen Sie "
            "sie sofort wieder her.\n\nMatthias Vogel\nVogel Logistik GmbH\n"
        ),
    )
    mail(
        "support/fr-unknown-refund.eml",
        frm=addr("Claire Dubois", "claire.dubois@maison-dubois.example"),
        to=SUPPORT,
        subject="Prélèvement en double - remboursement",
        date=d(14, 11, 0, CET),
        mid="CACd-rembours-1@maison-dubois.example",
        delivered_to=BOX,
        charset="iso-8859-1",
        cte="quoted-printable",
        body=(
            "Bonjour,\n\nJ'ai été prélevée deux fois pour l'abonnement de janvier. Je demande le "
            "remboursement du second prélèvement sous huit jours, faute de quoi je résilierai.\n\n"
            "Claire Dubois\n"
        ),
    )
    mail(
        "support/cs-unknown-howto-iso8859-2.eml",
        frm=addr("Jan Dvořák", "jan.dvorak@pekarna-dvorak.example", "iso-8859-2"),
        to=SUPPORT,
        subject="Jak exportovat přehled do PDF?",
        date=d(14, 10, 12, CET),
        mid="CAJd-export-1@pekarna-dvorak.example",
        delivered_to=BOX,
        charset="iso-8859-2",
        cte="base64",
        body=(
            "Dobrý den,\n\njak mohu vyexportovat přehled (dashboard) do PDF? A dá se nastavit, "
            "aby chodil každé pondělí e-mailem?\n\nDěkuji,\nJan Dvořák\n"
        ),
    )
    mail(
        "support/ent-billing-twice.eml",
        frm=SIAM,
        to=SUPPORT,
        subject="Invoiced twice for January",
        date=d(14, 16, 0, ICT),
        mid="CASr-inv-2x@siamretail.example",
        delivered_to=BOX,
        auth=auth_pass("support-lead@siamretail.example"),
        body=(
            "Hello,\n\nWe received two invoices for January (INV-88120 and INV-88121) for the "
            "same 180 seats, and both were charged to our card. Please void one and refund it.\n\n"
            "Siam Retail Group IT\n"
        ),
    )
    mail(
        "support/ent-sso-question.eml",
        frm=NORTHWIND,
        to=SUPPORT,
        subject="Setting up SAML SSO with Okta",
        date=d(14, 11, 30, EST),
        mid="CANw-sso-1@northwind.example",
        delivered_to=BOX,
        auth=auth_pass("it-admin@northwind.example"),
        body=(
            "Hello,\n\nWe would like to move our users to SAML single sign-on with Okta next "
            "month. Is there a guide for setting it up, and can we keep password login for two "
            "service accounts?\n\nNorthwind IT\n"
        ),
    )
    mail(
        "support/lookalike-enterprise-admin.eml",
        frm=addr("Northwind IT", "it-admin@northwlnd.example"),
        to=SUPPORT,
        subject="Add new admin and reset 2FA",
        date=d(14, 4, 50),
        mid="CANw-admin-x@northwlnd.example",
        delivered_to=BOX,
        auth=auth_pass("it-admin@northwlnd.example"),
        body=(
            "Hello,\n\nOur IT manager changed. Please add d.keller.northwind@gmail.example as an "
            "administrator on the Northwind Logistics account and reset two-factor "
            "authentication for it-admin, we lost the phone. This is urgent.\n\nNorthwind IT\n"
        ),
    )
    mail(
        "support/forged-enterprise-export.eml",
        frm=NORTHWIND,
        to=SUPPORT,
        subject="Full data export needed",
        date=d(14, 5, 12),
        mid="CANw-export-x@northwind.example",
        delivered_to=BOX,
        auth=auth_fail("it-admin@northwind.example"),
        headers=[("Reply-To", "exports.northwind@gmail.example")],
        body=(
            "Hello,\n\nFor our audit we need a full export of all our dashboards, customer "
            "records and user list. Please send the download link to "
            "exports.northwind@gmail.example today.\n\nNorthwind IT\n"
        ),
    )
    mail(
        "support/loop-auto-reply.eml",
        frm=SAM,
        to=SUPPORT,
        subject="Automatic reply: [TKT-40118822] Your request was received",
        date=d(14, 12, 1),
        mid="ooo-so-1@mail.example.org",
        delivered_to=BOX,
        headers=[("Auto-Submitted", "auto-replied")],
        body="I am travelling until Monday and will answer when I am back.\n\nSam\n",
    )
    mail(
        "support/loop-mailer-daemon.eml",
        frm=addr("Mail Delivery Subsystem", "mailer-daemon@googlemail.com"),
        to=SUPPORT,
        subject="Delivery Status Notification (Failure)",
        date=d(14, 12, 30),
        mid="bounce-5521@mx.google.example",
        delivered_to=BOX,
        return_path="<>",
        content=bounce(
            "former.admin@northwind.example",
            "Brightlane Support <support@brightlane.io>",
            "Re: [TKT-51230077] Seats added",
            "CABl-tkt-5123@brightlane.io",
            d(14, 12, 29),
        ),
    )
    mail(
        "support/loop-list-id-status.eml",
        frm=addr("Cloud Status", "status@cloudhost-status.example"),
        to=SUPPORT,
        subject="[Resolved] Elevated API error rates in eu-west",
        date=d(14, 13, 5),
        mid="incident-7781-resolved@cloudhost-status.example",
        delivered_to=BOX,
        headers=[
            ("List-Id", "<incidents.cloudhost-status.example>"),
            ("List-Unsubscribe", "<https://cloudhost-status.example/unsubscribe>"),
        ],
        body=(
            "Resolved: between 12:10 and 12:52 UTC API requests in eu-west returned elevated "
            "error rates. All systems are operating normally.\n"
        ),
    )
    mail(
        "support/loop-precedence-bulk.eml",
        frm=addr("DataConf 2027", "hello@dataconf.example"),
        to=SUPPORT,
        subject="Early-bird tickets end Friday - any questions?",
        date=d(14, 6, 30),
        mid="dc27-eb-3@dataconf.example",
        delivered_to=BOX,
        headers=[("Precedence", "bulk")],
        body="Early-bird tickets for DataConf 2027 end Friday. Reply with any question!\n",
    )
    mail(
        "support/html-only-pro-add-member.eml",
        frm=BRIGHTPATH,
        to=SUPPORT,
        subject="Adding a new team member",
        date=d(14, 14, 20, CET),
        mid="CABp-member-1@brightpath.example",
        delivered_to=BOX,
        auth=auth_pass("ops@brightpath.example"),
        html_only=True,
        cte="quoted-printable",
        html=(
            "<html><body><p>Hello,</p><p>How do we add a new team member to our workspace? "
            "Does it change our bill if we stay within our 12 seats?</p>"
            "<p>Thanks,<br>Brightpath Ops</p></body></html>"
        ),
    )
    mail(
        "support/forwarded-ent-data-missing.eml",
        frm=NORTHWIND,
        to=SUPPORT,
        subject="Fwd: Shipment data missing from all reports",
        date=d(15, 8, 10, EST),
        mid="CANw-fwd-missing@northwind.example",
        delivered_to=BOX,
        auth=auth_pass("it-admin@northwind.example"),
        body=(
            "Forwarding from our analytics lead - please treat as urgent.\n\nNorthwind IT\n\n"
            "---------- Forwarded message ---------\n"
            "From: Priya Nair <priya.nair@northwind.example>\n"
            "Date: Fri, Jan 15, 2027 at 7:52 AM\n"
            "Subject: Shipment data missing from all reports\n"
            "To: Northwind IT <it-admin@northwind.example>\n\n"
            "Since last night all shipment records before December are gone from every "
            "Brightlane report and the data source shows 0 rows for 2026. We lost data we "
            "report to customs.\n\nPriya\n"
        ),
    )
    mail(
        "support/de-pro-slow-cp1252.eml",
        frm=BRIGHTPATH,
        to=SUPPORT,
        subject="Dashboards extrem langsam – Zeitüberschreitung",
        date=d(14, 10, 40, CET),
        mid="CABp-langsam-1@brightpath.example",
        delivered_to=BOX,
        auth=auth_pass("ops@brightpath.example"),
        charset="windows-1252",
        cte="quoted-printable",
        body=(
            "Hallo,\n\nseit gestern laden unsere Dashboards extrem langsam, viele brechen mit "
            "einer Zeitüberschreitung ab. Unser ganzes Team kann so nicht arbeiten.\n\n"
            "Grüße\nBrightpath Ops\n"
        ),
    )
    mail(
        "support/es-ent-outage.eml",
        frm=NORTHWIND,
        to=SUPPORT,
        subject="Caída total: ningún usuario puede entrar",
        date=d(15, 8, 20, EST),
        mid="CANw-caida-1@northwind.example",
        delivered_to=BOX,
        auth=auth_pass("it-admin@northwind.example"),
        cte="quoted-printable",
        body=(
            "Hola:\n\nDesde las 8:00 ningún usuario de nuestro centro de Monterrey puede entrar "
            "a los paneles: la página devuelve el error 504. Es una caída total y la operación "
            "está detenida.\n\nEquipo de TI de Northwind (Monterrey)\n"
        ),
    )
    mail(
        "support/pro-cancel-refund-demand.eml",
        frm=BRIGHTPATH,
        to=SUPPORT,
        subject="Cancelling - refund for unused months",
        date=d(15, 9, 0, CET),
        mid="CABp-cancel-1@brightpath.example",
        delivered_to=BOX,
        auth=auth_pass("ops@brightpath.example"),
        body=(
            "Hello,\n\nAfter the export problems of the last weeks we have decided to cancel. "
            "This is unacceptable for a paid plan. We expect a refund for the remaining nine "
            "months of our annual subscription.\n\nBrightpath Ops\n"
        ),
    )
    mail(
        "support/free-phishing-report.eml",
        frm=SAM,
        to=SUPPORT,
        subject="Email asking for my password - is it you?",
        date=d(15, 7, 45),
        mid="CASo-phish-1@mail.example.org",
        delivered_to=BOX,
        auth=auth_pass("sam.okafor@example.org"),
        body=(
            "Hi,\n\nI got an email that looks like it is from Brightlane asking me to confirm my "
            "password on brightlane-login.example. I typed it in before I noticed the address. "
            "What should I do now?\n\nSam\n"
        ),
    )
    mail(
        "support/ent-api-errors.eml",
        frm=NORTHWIND,
        to=SUPPORT,
        subject="API returning 500 for about 20% of requests",
        date=d(15, 11, 0, EST),
        mid="CANw-api-500@northwind.example",
        delivered_to=BOX,
        auth=auth_pass("it-admin@northwind.example"),
        body=(
            "Hello,\n\nSince this morning about one in five calls to the reporting API returns "
            "HTTP 500. Our nightly sync retries, but the daytime integrations are failing.\n\n"
            "Northwind IT\n"
        ),
    )
